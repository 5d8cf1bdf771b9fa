from django.apps import AppConfig


class PlumbingConfig(AppConfig):
    """Plumbing as a Django app only for its one model (the scheduled jobs' run record) and `run_scheduled`."""

    name = "plumbing"
    verbose_name = "Scheduled work"
