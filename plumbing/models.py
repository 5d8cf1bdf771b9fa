"""Plumbing's one model: when each scheduled job last ran, what makes runs due-based across processes and restarts
(plumbing/scheduling/)."""

from django.db import models


class JobRun(models.Model):
    name = models.CharField(max_length=100, unique=True)
    last_started_at = models.DateTimeField(null=True, blank=True,
                                           help_text="Claimed by a conditional UPDATE: one runner per interval.")
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_result = models.CharField(max_length=300, blank=True)
    last_error = models.TextField(blank=True)
    runs = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["name"]
        verbose_name = "scheduled job"

    def __str__(self) -> str:
        return self.name
