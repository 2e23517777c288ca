"""At most AGENT_STARTS_PER_TARGET deploys of one target start at once; the others wait
`queued` and their job runs again a moment later (agents.services.provisioning)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import Agent
from agents.services.provisioning import (
    START_DEFERRAL_JITTER_SECONDS,
    START_DEFERRAL_SECONDS,
    StartDeferred,
    agent_provision,
    start_deferral,
)
from agents.tasks import provision_agent
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_starts(settings):
    settings.AGENT_STARTS_PER_TARGET = 2
    return settings


def _starting(user, count: int, target: str = "docker") -> list[Agent]:
    return [AgentFactory(owner=user, status="deploying", execution_target_id=target, container_id="")
            for _ in range(count)]


def _queued(user, target: str = "docker") -> Agent:
    soon = timezone.now() + timedelta(seconds=5)
    return AgentFactory(owner=user, status="queued", execution_target_id=target, container_id="",
                        provision_deadline_at=soon)


def test_a_deploy_waits_queued_while_its_target_has_every_start_taken(two_starts, user):
    _starting(user, 2)
    waiting = _queued(user)

    deferred = agent_provision(agent_id=waiting.pk, job_id="job-1")

    assert isinstance(deferred, StartDeferred)
    assert START_DEFERRAL_SECONDS <= deferred.seconds <= START_DEFERRAL_SECONDS + START_DEFERRAL_JITTER_SECONDS
    waiting.refresh_from_db()
    assert (waiting.status, waiting.provision_job_id) == ("queued", "")  # not claimed by this job
    # Its deadline moved on: the reconciler does not take over a deploy that waits its turn.
    queued_deadline = timedelta(seconds=two_starts.AGENT_QUEUED_DEADLINE_SECONDS)
    assert waiting.provision_deadline_at > timezone.now() + queued_deadline - timedelta(seconds=5)


def test_the_job_of_a_deferred_deploy_is_published_again_after_the_wait(two_starts, user, monkeypatch):
    _starting(user, 2)
    waiting = _queued(user)
    published = []
    monkeypatch.setattr(provision_agent, "apply_async",
                        lambda args=None, countdown=None, **_: published.append((args, countdown)))

    provision_agent.apply(args=[str(waiting.pk)])

    [(args, countdown)] = published
    assert args == [str(waiting.pk)]  # the agent's id only, as the first job
    assert START_DEFERRAL_SECONDS <= countdown <= START_DEFERRAL_SECONDS + START_DEFERRAL_JITTER_SECONDS


def test_a_start_that_ended_frees_its_slot(two_starts, user):
    first, _ = _starting(user, 2)
    waiting = _queued(user)
    assert isinstance(start_deferral(waiting.pk), StartDeferred)

    Agent.objects.filter(pk=first.pk).update(status="running")

    assert start_deferral(waiting.pk) is None  # the job goes on to claim the deploy


def test_starts_on_another_target_do_not_hold_a_deploy(two_starts, user):
    _starting(user, 2, target="remote:elsewhere")

    assert start_deferral(_queued(user).pk) is None


def test_no_bound_when_the_setting_is_zero(settings, user):
    settings.AGENT_STARTS_PER_TARGET = 0
    _starting(user, 20)

    assert start_deferral(_queued(user).pk) is None


def test_a_deploy_already_deploying_keeps_its_start(two_starts, user):
    # A redelivered or retried job of a deploy that holds a slot is never deferred by itself.
    mine, _ = _starting(user, 2)

    assert start_deferral(mine.pk) is None
