"""The console app's models: the scheduled jobs' run record (adminpanel/scheduling/)."""

from adminpanel.scheduling.models import JobRun  # noqa: F401
