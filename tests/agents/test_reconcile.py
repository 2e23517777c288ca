"""Deploys whose job was lost: the 503 of a refused publish, the reconciler that takes over
`queued` and `deploying` agents past their deadline, and a provisioning job that retries while
the database is away (docs/reliability.md). The broker is failed at its boundary (kombu's publish); the
jobs the reconciler publishes are recorded, not run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.db import OperationalError as DatabaseOperationalError
from django.utils import timezone
from kombu import Producer
from kombu.exceptions import OperationalError as BrokerOperationalError

from agents import tasks as agent_tasks
from agents.models import Agent
from agents.services import provisioning
from agents.services.deploy import agent_deploy
from agents.services.provisioning import agent_provision, agent_provision_retrying
from agents.services.reconcile import deploys_reconcile
from agents.services.selection import DeployRequest
from agents.tasks import provision_agent
from fleet.api.principal import Principal
from fleet.models import Event
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db

DEPLOY = "/api/agents/deploy"


def _refusing_broker(monkeypatch):
    def publish(self, *args, **kwargs):
        raise BrokerOperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    monkeypatch.setattr(Producer, "publish", publish)


@pytest.fixture
def published(monkeypatch):
    """The jobs published (agent id, task id), instead of sending them to the broker."""
    jobs = []

    def apply_async(args=None, kwargs=None, task_id=None, **options):
        jobs.append((args[0], task_id))

    monkeypatch.setattr(provision_agent, "apply_async", apply_async)
    return jobs


@pytest.fixture
def queued(user, settings, django_capture_on_commit_callbacks):
    settings.AGENT_QUEUED_DEADLINE_SECONDS = 300
    with django_capture_on_commit_callbacks(execute=False):
        return agent_deploy(principal=Principal(user=user), request=DeployRequest(name="waiting"))


def _past_deadline(agent, **fields):
    Agent.objects.filter(pk=agent.pk).update(provision_deadline_at=timezone.now() - timedelta(seconds=1), **fields)


@pytest.mark.django_db(transaction=True)
def test_a_deploy_the_broker_refuses_answers_503_and_keeps_the_agent_queued_for_the_reconciler(
    user_client, monkeypatch
):
    _refusing_broker(monkeypatch)

    response = user_client.post(DEPLOY, {"name": "during-outage"}, format="json")

    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "broker_unavailable"
    assert set(body) == {"error", "code"}
    assert "127.0.0.1" not in body["error"]
    agent = Agent.objects.get(name="during-outage")
    assert agent.status == "queued"
    assert agent.provision_deadline_at <= timezone.now()  # due at the reconciler's next sweep


@pytest.mark.django_db(transaction=True)
def test_the_next_sweep_publishes_a_deploy_the_broker_refused_without_waiting_for_its_deadline(
    user_client, monkeypatch, settings
):
    settings.AGENT_QUEUED_DEADLINE_SECONDS = 300
    _refusing_broker(monkeypatch)
    assert user_client.post(DEPLOY, {"name": "during-outage"}, format="json").status_code == 503
    monkeypatch.undo()  # the broker is back
    jobs = []
    monkeypatch.setattr(provision_agent, "apply_async", lambda args=None, task_id=None, **_: jobs.append(args[0]))

    deploys_reconcile()

    assert jobs == [str(Agent.objects.get(name="during-outage").pk)]


@pytest.mark.django_db(transaction=True)
def test_a_redeploy_the_broker_refuses_answers_503_and_keeps_the_agent_queued(user_client, user, monkeypatch):
    agent = AgentFactory(owner=user, status="error", container_id="")
    _refusing_broker(monkeypatch)

    response = user_client.post(f"/api/agents/{agent.pk}/redeploy")

    assert (response.status_code, response.json()["code"]) == (503, "broker_unavailable")
    agent.refresh_from_db()
    assert agent.status == "queued"
    assert agent.provision_deadline_at <= timezone.now()  # due at the reconciler's next sweep


def test_a_deploy_records_when_the_reconciler_takes_over(queued, settings):
    before = timezone.now()

    agent = Agent.objects.get(pk=queued.pk)

    assert before + timedelta(seconds=290) < agent.provision_deadline_at <= before + timedelta(seconds=301)
    assert (agent.provision_job_id, agent.provision_takeovers) == ("", 0)


def test_the_reconciler_leaves_a_queued_agent_alone_before_its_deadline(queued, published):
    assert deploys_reconcile() == {"taken_over": 0, "failed": 0, "unpublished": 0}

    assert published == []
    assert Agent.objects.get(pk=queued.pk).provision_takeovers == 0


def test_the_reconciler_publishes_again_the_job_of_an_agent_queued_past_its_deadline(queued, published):
    _past_deadline(queued)

    assert deploys_reconcile()["taken_over"] == 1

    assert [agent_id for agent_id, _ in published] == [str(queued.pk)]
    agent = Agent.objects.get(pk=queued.pk)
    assert agent.status == "queued"
    assert agent.provision_takeovers == 1
    assert agent.provision_deadline_at > timezone.now()


def test_a_second_sweep_does_not_publish_the_same_deploy_twice(queued, published):
    _past_deadline(queued)

    deploys_reconcile()
    deploys_reconcile()

    assert len(published) == 1


def test_a_deploying_agent_past_its_deadline_is_handed_to_a_new_job_and_the_old_one_steps_aside(
    queued, published
):
    _past_deadline(queued, status="deploying", provision_job_id="lost-job")

    deploys_reconcile()

    [(agent_id, job_id)] = published
    agent = Agent.objects.get(pk=queued.pk)
    assert (agent.status, agent.provision_job_id) == ("deploying", job_id)
    # A late redelivery of the lost job finds the deploy owned by another and does nothing.
    agent_provision(agent_id=queued.pk, job_id="lost-job")
    assert Agent.objects.get(pk=queued.pk).status == "deploying"


def test_a_deploying_agent_whose_job_gives_news_is_left_alone(queued, published, settings):
    settings.AGENT_PROVISION_DEADLINE_SECONDS = 600
    _past_deadline(queued, status="deploying")

    agent_provision_retrying(agent_id=queued.pk, reason="The engine could not be reached.")
    deploys_reconcile()

    assert published == []
    assert Agent.objects.get(pk=queued.pk).provision_deadline_at > timezone.now() + timedelta(seconds=500)


def test_the_claim_records_its_job_and_a_deadline_past_the_ready_timeout(queued, settings, monkeypatch):
    settings.AGENT_PROVISION_DEADLINE_SECONDS = 60
    settings.AGENT_READY_TIMEOUT_SECONDS = 120
    monkeypatch.setattr(provisioning, "deploy_step_set", lambda *a: (_ for _ in ()).throw(RuntimeError("stop")))

    with pytest.raises(RuntimeError):
        agent_provision(agent_id=queued.pk, job_id="job-1")

    agent = Agent.objects.get(pk=queued.pk)
    assert (agent.status, agent.provision_job_id) == ("deploying", "job-1")
    assert agent.provision_deadline_at > timezone.now() + timedelta(seconds=400)


def test_a_deploy_taken_over_too_often_ends_in_error_with_the_reason(queued, published, settings):
    settings.AGENT_RECONCILE_MAX_TAKEOVERS = 2
    _past_deadline(queued, status="deploying", provision_takeovers=2)

    assert deploys_reconcile()["failed"] == 1

    assert published == []
    agent = Agent.objects.get(pk=queued.pk)
    assert agent.status == "error"
    assert "after 2 attempts to resume it" in agent.last_error
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.error").exists()


def test_a_broker_still_down_leaves_the_deploy_for_the_next_sweep_uncounted(queued, monkeypatch):
    _refusing_broker(monkeypatch)
    _past_deadline(queued)

    assert deploys_reconcile() == {"taken_over": 0, "failed": 0, "unpublished": 1}

    agent = Agent.objects.get(pk=queued.pk)
    assert (agent.status, agent.provision_takeovers) == ("queued", 0)


def test_adopted_and_settled_agents_are_never_taken_over(queued, published, tenancy):
    _past_deadline(queued, status="running")
    external = tenancy.agent(status="queued", is_external=True)
    _past_deadline(external)

    deploys_reconcile()

    assert published == []


@pytest.fixture
def retries(monkeypatch):
    """The retries the provisioning task asks for, instead of Celery running them."""
    asked = []

    def retry(exc=None, countdown=None, **options):
        asked.append((type(exc), countdown))
        return Retry()

    monkeypatch.setattr(provision_agent, "retry", retry)
    return asked


def _database_away(*args, **kwargs):
    raise DatabaseOperationalError("server closed the connection unexpectedly")


def test_a_provisioning_job_retries_when_the_database_is_away_instead_of_ending(queued, retries, monkeypatch):
    monkeypatch.setattr(agent_tasks, "agent_provision", _database_away)

    provision_agent.apply(args=[str(queued.pk)])

    assert [kind for kind, _ in retries] == [DatabaseOperationalError]
    assert Agent.objects.get(pk=queued.pk).status == "queued"


def test_a_failure_that_cannot_be_recorded_while_the_database_is_away_retries(queued, retries, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(agent_tasks, "agent_provision", broken)
    monkeypatch.setattr(agent_tasks, "agent_provision_fail", _database_away)

    provision_agent.apply(args=[str(queued.pk)])

    assert [kind for kind, _ in retries] == [DatabaseOperationalError]


def test_a_bug_with_the_database_up_still_ends_in_error(queued, retries, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(agent_tasks, "agent_provision", broken)

    provision_agent.apply(args=[str(queued.pk)])

    assert retries == []
    agent = Agent.objects.get(pk=queued.pk)
    assert (agent.status, agent.last_error) == ("error", "Provisioning failed unexpectedly: a bug")
