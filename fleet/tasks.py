"""Kernel Celery tasks."""

from celery import shared_task

from .heartbeat import heartbeat_record


@shared_task(name="fleet.worker_heartbeat", ignore_result=True)
def worker_heartbeat() -> None:
    heartbeat_record(hostname=worker_heartbeat.request.hostname)
