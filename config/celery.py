"""The Celery app: external calls (sends, CRM, e-mail) and schedules."""

import os

from celery import Celery

from plumbing.scheduling.jobs import beat_schedule

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

app = Celery("concierge")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Beat runs the one registry of scheduled jobs (plumbing/scheduling/jobs.py).
app.conf.beat_schedule = beat_schedule()
app.autodiscover_tasks()
