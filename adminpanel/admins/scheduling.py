from django.contrib import admin

from adminpanel.records import ReadOnlyMixin
from plumbing.models import JobRun


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Read-only: when each scheduled job last ran and what it said (`manage.py run_scheduled` runs due ones)."""

    list_display = ("name", "last_started_at", "last_finished_at", "runs", "last_result", "last_error")
    readonly_fields = list_display
