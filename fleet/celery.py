"""The Celery application: configuration comes from Django settings (CELERY_*).

A worker records a heartbeat as soon as it is ready, so /api/health sees a fresh worker
before beat's first `fleet.worker_heartbeat` tick reaches it, and the time it finished each
periodic job (fleet.scheduler). Its pool processes leave their
stopping to it (see `_pool_process_in_its_own_group`).
"""

import os

from celery import Celery
from celery.signals import task_postrun, worker_process_init, worker_ready

from .kombu_fixes import kombu_filesystem_patch, kombu_redis_patch

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
kombu_redis_patch()  # a worker must survive a Redis outage while it holds an ETA task (fleet.kombu_fixes)
kombu_filesystem_patch()  # make run's workers declaring their queues at once (fleet.kombu_fixes)

app = Celery("fleet")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _record_heartbeat_on_start(sender=None, **kwargs):
    from fleet.heartbeat import heartbeat_record  # Django is set up once the worker is ready

    heartbeat_record(hostname=getattr(sender, "hostname", None))


@task_postrun.connect
def _record_periodic_run(sender=None, **kwargs):
    """When a worker finished a periodic job (fleet.scheduler judges the jobs that stop running)."""
    from fleet.scheduler import periodic_run_record  # Django is set up before a task runs

    periodic_run_record(getattr(sender, "name", ""))


@worker_process_init.connect
def _pool_process_in_its_own_group(**kwargs):
    """A process manager that signals the worker's process group (honcho's SIGTERM on Ctrl-C)
    would kill the pool's processes under the worker: their running tasks cut short, one ERROR
    line each, and a warm shutdown that waits for nothing. In a group of their own they are ended
    by the worker itself, after their current task (it still signals them itself on a cold
    shutdown, and they die with it: celery sets their parent-death signal)."""
    os.setpgrp()
