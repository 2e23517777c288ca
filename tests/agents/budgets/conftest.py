"""Budget enforcement fixtures: Celery tasks run inline, in this process."""

from __future__ import annotations

import pytest


@pytest.fixture
def eager_tasks():
    """Run Celery tasks inline; wrap the action in django_capture_on_commit_callbacks(execute=True)
    so that what is enqueued after commit runs as it would after a real commit."""
    from fleet.celery import app

    was_eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = was_eager
