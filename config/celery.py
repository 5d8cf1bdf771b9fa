"""The Celery app: external calls (sends, CRM, e-mail) and schedules."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

app = Celery("concierge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
