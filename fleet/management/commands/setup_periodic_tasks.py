"""Install the periodic jobs every app declares (AppConfig.periodic_tasks) into celery beat.

Run at release (Procfile). Rows are found by job name and written only when something
differs, so a re-run changes nothing. Rows this command wrote carry MANAGED_MARKER in
their description; such a row whose job is no longer declared is disabled (kept, with
its history, for the operator to delete). Rows made by hand in the admin are left alone.
Each row gets `expire_seconds` (default: one interval) so beat drops a late tick instead
of letting a backlog pile up behind a stopped worker, and the `periodic` queue (PERIODIC_QUEUE),
so a burst of other work never delays a tick.
"""

from __future__ import annotations

import json

from django.apps import apps
from django.conf import settings
from django.core.management.base import CommandError
from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from fleet.celery import app as celery_app
from fleet.commands import RecordedCommand
from fleet.periodic import PeriodicJob

MANAGED_MARKER = "[managed by setup_periodic_tasks]"


def celery_task_names() -> set[str]:
    celery_app.loader.import_default_modules()  # autodiscovery is lazy: load every app's tasks now
    return set(celery_app.tasks)


def declared_jobs() -> list[PeriodicJob]:
    """Every app's periodic jobs; refuses duplicates and malformed declarations."""
    jobs: dict[str, PeriodicJob] = {}
    known = celery_task_names()
    for config in apps.get_app_configs():
        for job in getattr(config, "periodic_tasks", ()) or ():
            if not isinstance(job, PeriodicJob):
                raise CommandError(f"{config.label}.periodic_tasks holds {job!r}, not a fleet.periodic.PeriodicJob.")
            if job.name in jobs:
                raise CommandError(f"The periodic job name {job.name!r} is declared twice.")
            if job.every_seconds < 1 or job.every_seconds != int(job.every_seconds):
                raise CommandError(f"{job.name!r}: every_seconds must be a whole number of seconds, at least 1.")
            if job.task not in known:
                raise CommandError(f"{job.name!r} names the task {job.task!r}, which no Celery worker knows.")
            jobs[job.name] = job
    return list(jobs.values())


def _desired_fields(job: PeriodicJob) -> dict:
    # IntervalSchedule has no unique constraint (operators may add rows): reuse the oldest match.
    schedule = {"every": int(job.every_seconds), "period": IntervalSchedule.SECONDS}
    interval = IntervalSchedule.objects.filter(**schedule).order_by("id").first()
    if interval is None:
        interval = IntervalSchedule.objects.create(**schedule)
    expires = job.expires_seconds if job.expires_seconds is not None else job.every_seconds
    return {
        "task": job.task,
        "interval": interval,
        "crontab": None,
        "solar": None,
        "clocked": None,
        "one_off": False,
        "args": "[]",
        "kwargs": json.dumps(job.kwargs, sort_keys=True),
        "expires": None,
        "expire_seconds": max(1, int(expires)),
        "queue": settings.PERIODIC_QUEUE,  # served by the Procfile's `periodic` worker alone
        "enabled": True,
        "description": f"{MANAGED_MARKER} Declared in code; edits here are overwritten at release.",
    }


class Command(RecordedCommand):
    help = "Create, update or disable the celery-beat rows of the periodic jobs declared by the apps."
    # The system checks (agents.W001: how agents reach the web server) are migrate's and check's.
    requires_system_checks = []

    @transaction.atomic
    def handle(self, *args, **options):
        jobs = declared_jobs()
        counts = {"created": 0, "updated": 0, "unchanged": 0, "disabled": 0}
        for job in jobs:
            counts[self._upsert(job)] += 1
        stale = PeriodicTask.objects.filter(description__startswith=MANAGED_MARKER, enabled=True).exclude(
            name__in=[job.name for job in jobs]
        )
        for row in stale:
            row.enabled = False
            row.save()
            counts["disabled"] += 1
            self.stdout.write(f"Disabled {row.name!r}: no app declares it any more.")
        self.stdout.write(self.style.SUCCESS(", ".join(f"{n} {what}" for what, n in counts.items())))

    def _upsert(self, job: PeriodicJob) -> str:
        desired = _desired_fields(job)
        row = PeriodicTask.objects.filter(name=job.name).first()
        if row is None:
            PeriodicTask(name=job.name, **desired).save()
            return "created"
        changed = [f for f, value in desired.items() if getattr(row, f) != value]
        if not changed:
            return "unchanged"
        for field in changed:
            setattr(row, field, desired[field])
        row.save()  # save() also tells beat to reload its schedule
        return "updated"
