"""What integrations registers with the rest of the house: the beat job of token refresh and
the subscription that applies the integrations when a runtime comes up."""

from __future__ import annotations

import pytest
from celery.signals import before_task_publish
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from agents.events import agent_event
from fleet.celery import app
from integrations.services import integration_connect

pytestmark = pytest.mark.django_db


@pytest.fixture
def published():
    names = []

    def record(sender=None, body=None, **kwargs):
        if str(sender).startswith("integrations."):  # the app's own tasks (an event also asks alerts for a dispatch)
            names.append((sender, list(body[0]) if body else None))

    before_task_publish.connect(record, weak=False)
    yield names
    before_task_publish.disconnect(record)
    app.control.purge()


def test_the_refresh_job_is_installed_every_five_minutes():
    call_command("setup_periodic_tasks", stdout=open("/dev/null", "w"))  # noqa: SIM115

    job = PeriodicTask.objects.get(name="integrations: refresh OAuth tokens")
    assert job.task == "integrations.refresh_oauth_tokens" and job.interval.every == 300


@pytest.mark.parametrize("kind", ["agent.running", "agent.started", "agent.restarted"])
def test_a_runtime_coming_up_gets_its_integrations_applied_by_id(tenancy, published, kind,
                                                                 django_capture_on_commit_callbacks):
    agent = tenancy.agent(status="running")
    integration_connect(agent=agent, provider="github", config={"token": "ghp_x"})

    with django_capture_on_commit_callbacks(execute=True):
        agent_event(agent, kind, "up")

    assert published == [("integrations.apply_runtime_state", [str(agent.pk), True])]


def test_agents_without_integrations_cost_nothing(tenancy, published, django_capture_on_commit_callbacks):
    agent = tenancy.agent(status="running")

    with django_capture_on_commit_callbacks(execute=True):
        agent_event(agent, "agent.running", "up")

    assert published == []


def test_other_events_are_ignored(tenancy, published, django_capture_on_commit_callbacks):
    agent = tenancy.agent(status="running")
    integration_connect(agent=agent, provider="github", config={"token": "ghp_x"})

    with django_capture_on_commit_callbacks(execute=True):
        agent_event(agent, "agent.stopped", "down")

    assert published == []
