"""The sampler and the purge are declared for beat and registered with Celery."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from agents.models import StatsSample
from agents.stats.tasks import PURGE_TASK, SAMPLE_TASK, stats_purge_expired
from fleet.celery import app
from tests.factories.agents import AgentFactory, make_samples


def jobs() -> dict:
    return {job.task: job for job in apps.get_app_config("agents").periodic_tasks}


def test_the_sampler_runs_every_ten_seconds_and_a_late_tick_expires_instead_of_queueing():
    job = jobs()[SAMPLE_TASK]

    assert job.every_seconds == 10
    assert job.expires_seconds == 10
    assert SAMPLE_TASK in app.tasks


def test_the_purge_is_declared_and_registered():
    assert PURGE_TASK in jobs()
    assert PURGE_TASK in app.tasks


@pytest.mark.django_db
def test_the_purge_task_deletes_what_is_past_retention():
    agent = AgentFactory()
    make_samples(agent, start=timezone.now() - timedelta(hours=30), count=5)
    make_samples(agent, start=timezone.now() - timedelta(hours=1), count=5)

    stats_purge_expired()

    assert StatsSample.objects.count() == 5


def test_a_worker_running_the_sample_task_stores_a_live_containers_row(celery_worker_live, docker_settings):
    from agents.backends.base import WorkloadSpec
    from agents.backends.docker import DockerBackend
    from agents.stats.tasks import stats_sample

    agent = AgentFactory(container_id="")
    spec = WorkloadSpec(str(agent.pk), f"fleet-stats-task-{agent.pk.hex[:8]}", "openclaw",
                        docker_settings.AGENT_IMAGE_OPENCLAW, {}, {}, 0.5, 128, 1)
    agent.container_id = DockerBackend().create(agent, spec).container_id
    agent.save(update_fields=["container_id"])

    stats_sample.delay()

    row = celery_worker_live.wait_until(lambda: StatsSample.objects.filter(agent=agent).first(), timeout=30)
    assert row.memory_limit_mb == 128.0
