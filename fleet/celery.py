"""The Celery application: configuration comes from Django settings (CELERY_*).

A worker records a heartbeat as soon as it is ready, so /api/health sees a fresh worker
before beat's first `fleet.worker_heartbeat` tick reaches it.
"""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")

app = Celery("fleet")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _record_heartbeat_on_start(sender=None, **kwargs):
    from fleet.heartbeat import heartbeat_record  # Django is set up once the worker is ready

    heartbeat_record(hostname=getattr(sender, "hostname", None))
