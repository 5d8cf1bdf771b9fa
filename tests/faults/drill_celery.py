"""The project's Celery app as the worker drill runs it: `celery -A tests.faults.drill_celery worker`.

Only the broker's visibility timeout differs. kombu's Redis transport hands a
task whose worker died without acking it to another worker once the timeout has
passed: an hour by default, two seconds here so the drill can watch it happen.
"""

from config.celery import app

app.conf.broker_transport_options = {"visibility_timeout": 2, "unacked_restore_interval": 1,
                                     "unacked_restore_throttle": 1}

__all__ = ["app"]
