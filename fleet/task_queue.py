"""Starting a task by its name.

The task modules call the services, as views do, so they sit above them; a service that starts
a task of its app names it instead of importing its module (no import circle, and no import
inside a task's body to dodge one)."""

from __future__ import annotations

from celery import Task
from celery.exceptions import NotRegistered

from .celery import app


def task_named(name: str) -> Task:
    """The task registered under `name`, with its own options (retries, acks, and in tests the
    eager mode); the queue comes from CELERY_TASK_ROUTES."""
    try:
        return app.tasks[name]
    except NotRegistered:
        # A web process has not imported every app's task module yet: import them as a worker
        # does at its start (autodiscovery), once.
        app.loader.import_default_modules()
        return app.tasks[name]
