"""POST /api/agents/deploy with an Idempotency-Key: one agent per key and caller within 24 h."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu import Producer
from kombu.exceptions import OperationalError as BrokerOperationalError

from agents.models import Agent, DeployIdempotencyKey
from agents.services.idempotency import deploy_keys_expire
from tests.support import client_for

pytestmark = pytest.mark.django_db

DEPLOY = "/api/agents/deploy"


def deploy(client, key=None, **body):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(DEPLOY, body, format="json", **headers)


def test_the_same_key_answers_the_first_agent_instead_of_a_second(user_client, user):
    first = deploy(user_client, "k-1", name="once")
    again = deploy(user_client, "k-1", name="once")

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert Agent.objects.filter(owner=user).count() == 1


def test_the_replay_is_the_first_body_even_after_the_agent_moved_on(user_client):
    first = deploy(user_client, "k-2", name="moving")
    Agent.objects.filter(pk=first.json()["id"]).update(status="running")

    assert deploy(user_client, "k-2", name="moving").json()["status"] == "queued"


def test_without_a_key_every_deploy_makes_an_agent(user_client, user):
    deploy(user_client, name="twice")
    deploy(user_client, name="twice")

    assert Agent.objects.filter(owner=user, name="twice").count() == 2


def test_another_key_makes_another_agent(user_client, user):
    deploy(user_client, "a", name="x")
    deploy(user_client, "b", name="x")

    assert Agent.objects.filter(owner=user).count() == 2


def test_the_same_key_with_another_body_is_refused(user_client, user):
    deploy(user_client, "k-3", name="first")

    response = deploy(user_client, "k-3", name="second")

    assert (response.status_code, response.json()["code"]) == (409, "idempotency_key_reused")
    assert Agent.objects.filter(owner=user).count() == 1


def test_keys_are_per_caller(tenancy):
    deploy(tenancy.client("editor"), "shared", name="mine")
    response = deploy(tenancy.client("admin"), "shared", name="mine")

    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response
    assert Agent.objects.filter(name="mine").count() == 2


def test_an_api_key_and_its_issuers_session_do_not_share_keys(tenancy):
    key_client = client_for(api_key=tenancy.key("agents:write"))
    by_key = deploy(key_client, "same", name="k")
    by_session = deploy(client_for(tenancy.owner), "same", name="k")

    assert by_key.json()["id"] != by_session.json()["id"]


def test_a_key_older_than_its_ttl_is_forgotten(user_client, user, settings):
    settings.IDEMPOTENCY_KEY_TTL_HOURS = 24
    first = deploy(user_client, "old", name="y")
    DeployIdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))

    again = deploy(user_client, "old", name="y")

    assert again.status_code == 201
    assert again.json()["id"] != first.json()["id"]
    assert DeployIdempotencyKey.objects.count() == 1


def test_the_hourly_job_deletes_expired_keys(user_client):
    deploy(user_client, "gone", name="z")
    deploy(user_client, "kept", name="z")
    DeployIdempotencyKey.objects.filter(key="gone").update(created_at=timezone.now() - timedelta(hours=25))

    assert deploy_keys_expire() == 1

    assert list(DeployIdempotencyKey.objects.values_list("key", flat=True)) == ["kept"]


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "two words"])
def test_a_malformed_key_is_a_400(user_client, user, key):
    response = deploy(user_client, key, name="bad")

    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["Idempotency-Key"]
    assert not Agent.objects.filter(owner=user).exists()


def test_a_deploy_refused_for_its_body_leaves_the_key_free(user_client, user):
    refused = deploy(user_client, "k-4", name="n" * 101)
    assert refused.status_code == 400

    assert deploy(user_client, "k-4", name="fine").status_code == 201


def test_a_replay_still_needs_the_write_scope(tenancy):
    writer = tenancy.key("agents:write")
    deploy(client_for(api_key=writer), "k-5", name="scoped")
    reader = client_for(api_key=tenancy.key("agents:read"))

    response = deploy(reader, "k-5", name="scoped")

    assert (response.status_code, response.json()["code"]) == (403, "missing_scope")


@pytest.mark.django_db(transaction=True)
def test_a_retry_after_a_broker_outage_answers_the_agent_that_was_kept(user_client, user, monkeypatch):
    def publish(self, *args, **kwargs):
        raise BrokerOperationalError("Connection refused.")

    with monkeypatch.context() as patched:
        patched.setattr(Producer, "publish", publish)
        outage = deploy(user_client, "k-6", name="outage")
    assert outage.status_code == 503
    monkeypatch.setattr("agents.tasks.provision_agent.delay", lambda *args: None)

    retry = deploy(user_client, "k-6", name="outage")

    assert retry.status_code == 201
    assert retry.json()["name"] == "outage"
    assert Agent.objects.filter(owner=user).count() == 1
