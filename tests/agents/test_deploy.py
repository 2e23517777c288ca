"""POST /api/agents/deploy: the deploy table, rules (1) to (5), billing and keys."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Agent, WorkspaceAgent
from agents.tasks import provision_agent
from fleet.models import Event
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db

DEPLOY = "/api/agents/deploy"


def deploy(client, **body):
    return client.post(DEPLOY, body, format="json")


def test_it_creates_a_queued_agent_with_server_defaults(user_client, user, settings):
    settings.DEFAULT_VCPU, settings.DEFAULT_RAM_MB, settings.DEFAULT_DISK_GB = 2, 2048, 20

    response = deploy(user_client)

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "queued"
    placement = (body["runtime_family"], body["deploy_target"], body["execution_target_id"])
    assert placement == ("openclaw", "docker", "docker")
    assert (body["sandbox_profile"], body["sandbox_type"]) == ("standard", "standard")
    assert (body["vcpu"], body["ram_mb"], body["disk_gb"]) == (2, 2048, 20)
    assert body["name"].startswith("openclaw-agent-")
    for field in ("id", "node", "container_name", "created_at"):
        assert field in body
    agent = Agent.objects.get(pk=body["id"])
    assert agent.owner == user
    assert agent.gateway_token  # generated, stored encrypted
    assert Event.objects.filter(kind="agent.queued", agent_id=agent.pk).exists()


def test_it_publishes_the_provisioning_job_only_after_commit(user_client, django_capture_on_commit_callbacks,
                                                              monkeypatch):
    published = []
    monkeypatch.setattr(provision_agent, "apply_async", lambda args=None, kwargs=None, **_: published.append(args[0]))
    with django_capture_on_commit_callbacks() as callbacks:  # held, not run: the commit has not happened
        response = deploy(user_client, name="later")
    assert published == []

    for callback in callbacks:
        callback()

    assert published == [response.json()["id"]]


def test_generated_names_end_in_a_random_suffix(user_client):
    first = deploy(user_client).json()["name"]
    second = deploy(user_client).json()["name"]

    assert first != second


def test_control_characters_are_stripped_from_the_name(user_client):
    response = deploy(user_client, name="my\x07 agent\x1b\n")

    assert response.json()["name"] == "my agent"


def test_a_nul_in_the_name_is_stripped_like_any_control_character(user_client):
    response = deploy(user_client, name="my\x00 agent\u202e")

    assert (response.status_code, response.json()["name"]) == (201, "my agent")


def test_a_name_over_100_characters_is_refused(user_client):
    response = deploy(user_client, name="x" * 101)

    assert response.status_code == 400
    assert "name" in response.json()["fields"]


def test_a_name_of_exactly_100_characters_is_accepted(user_client):
    assert deploy(user_client, name="x" * 100).status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"runtime_family": "llama"}, "runtime_family"),
        ({"deploy_target": "mainframe"}, "deploy_target"),
        ({"deploy_target": "k8s"}, "execution_target_id"),  # a cluster is never chosen automatically
        ({"deploy_target": "proxmox"}, "execution_target_id"),  # PROXMOX_URL is not set here
        ({"execution_target_id": "k8s:prod"}, "execution_target_id"),  # no such cluster
        ({"execution_target_id": "docker:elsewhere"}, "execution_target_id"),
        ({"deploy_target": "docker", "execution_target_id": "proxmox"}, "execution_target_id"),
        ({"sandbox_profile": "gvisor"}, "sandbox_profile"),
        ({"sandbox": "gvisor"}, "sandbox_profile"),
        ({"sandbox_profile": "nemoclaw"}, "sandbox_profile"),  # not enabled
        ({"sandbox_profile": "standard", "sandbox": "nemoclaw"}, "sandbox_profile"),
        ({"vcpu": "lots"}, "vcpu"),
        ({"ram_mb": True}, "ram_mb"),
        ({"name": 42}, "name"),
        ({"migration_draft_id": "draft-1"}, "migration_draft_id"),
    ],
)
def test_invalid_or_unavailable_selections_are_400(user_client, body, field):
    response = deploy(user_client, **body)

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"]
    assert not Agent.objects.exists()


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"runtime_family": "llama", "deploy_target": "mainframe"}, {"runtime_family", "deploy_target"}),
        ({"vcpu": "lots", "runtime_family": "llama"}, {"vcpu", "runtime_family"}),  # a type and a rule
        ({"name": "x" * 101, "sandbox_profile": "gvisor", "ram_mb": True}, {"name", "sandbox_profile", "ram_mb"}),
    ],
)
def test_every_bad_field_is_named_at_once(user_client, body, fields):
    response = deploy(user_client, **body)

    assert response.status_code == 400, response.content
    assert set(response.json()["fields"]) == fields
    assert not Agent.objects.exists()


def test_a_resource_the_server_changes_says_so(user_client, settings):
    settings.MAX_RAM_MB = 65536

    response = deploy(user_client, ram_mb=999_999_999, vcpu=0.1, disk_gb=10)

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["ram_mb"] == 65536 and body["vcpu"] == 0.25 and body["disk_gb"] == 10
    assert body["adjusted"] == {
        "ram_mb": {"requested": 999_999_999, "applied": 65536,
                   "why": "Lowered to the server's limit, MAX_RAM_MB (65536)."},
        "vcpu": {"requested": 0.1, "applied": 0.25, "why": "Raised to the minimum, 0.25."},
    }


def test_nothing_changed_is_nothing_adjusted(user_client):
    assert deploy(user_client, ram_mb=1024).json()["adjusted"] == {}


def test_remote_docker_from_a_session_is_400_while_no_host_is_registered(user_client):
    response = deploy(user_client, deploy_target="remote-docker")

    assert response.status_code == 400
    assert not Agent.objects.exists()


def test_nemoclaw_deploys_when_enabled(user_client, settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]

    body = deploy(user_client, sandbox_profile="nemoclaw").json()

    assert (body["sandbox_profile"], body["sandbox_type"]) == ("nemoclaw", "nemoclaw")


def test_the_legacy_alias_sandbox_is_accepted(user_client, settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]

    assert deploy(user_client, sandbox="nemoclaw").json()["sandbox_profile"] == "nemoclaw"


def test_hermes_supports_only_the_standard_profile(user_client, settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]

    assert deploy(user_client, runtime_family="hermes").json()["runtime_family"] == "hermes"
    refused = deploy(user_client, runtime_family="hermes", sandbox_profile="nemoclaw")
    assert refused.status_code == 400
    assert "sandbox_profile" in refused.json()["fields"]


def test_a_session_naming_an_unknown_migration_draft_gets_404(user_client):
    # Drafts themselves: tests/agents/files/test_migrations_api.py.
    response = deploy(user_client, migration_draft_id=str(uuid.uuid4()))
    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert not Agent.objects.exists()


def test_self_hosted_clamps_explicit_resources_to_operator_limits(user_client, settings):
    settings.MAX_VCPU, settings.MAX_RAM_MB, settings.MAX_DISK_GB = 4, 8192, 100

    body = deploy(user_client, vcpu=64, ram_mb=10**6, disk_gb=5000).json()

    assert (body["vcpu"], body["ram_mb"], body["disk_gb"]) == (4, 8192, 100)


def test_self_hosted_raises_explicit_resources_to_the_minimums(user_client):
    body = deploy(user_client, vcpu=0, ram_mb=128, disk_gb=0).json()

    assert (body["ram_mb"], body["disk_gb"]) == (512, 1)
    assert body["vcpu"] > 0


def test_self_hosted_keeps_explicit_resources_within_limits(user_client):
    body = deploy(user_client, vcpu=2.5, ram_mb=3000, disk_gb=30).json()

    assert (body["vcpu"], body["ram_mb"], body["disk_gb"]) == (2.5, 3000, 30)


def test_the_defaults_are_the_settings_and_nowhere_else(user_client, settings):
    settings.DEFAULT_VCPU, settings.DEFAULT_RAM_MB, settings.DEFAULT_DISK_GB = 2, 3072, 15

    body = deploy(user_client).json()

    assert (body["vcpu"], body["ram_mb"], body["disk_gb"]) == (2, 3072, 15)


def test_paas_ignores_resource_fields(user_client, settings):
    settings.PLATFORM_MODE = "paas"

    body = deploy(user_client, vcpu=8, ram_mb=16384, disk_gb=200).json()

    assert (body["vcpu"], body["ram_mb"], body["disk_gb"]) == (settings.DEFAULT_VCPU, settings.DEFAULT_RAM_MB,
                                                               settings.DEFAULT_DISK_GB)


def test_paas_limits_the_number_of_agents_by_plan(user_client, user, settings):
    settings.PLATFORM_MODE = "paas"
    settings.PAAS_PLAN_LIMITS = {"free": 2, "pro": 10}
    AgentFactory.create_batch(2, owner=user)

    response = deploy(user_client)

    assert response.status_code == 402
    assert response.json()["code"] == "billing_limit"
    assert Agent.objects.filter(owner=user).count() == 2


def test_self_hosted_is_unlimited_unless_max_agents_per_user_is_set(user_client, user, settings):
    AgentFactory.create_batch(3, owner=user)
    assert deploy(user_client).status_code == 201

    settings.MAX_AGENTS_PER_USER = 4
    response = deploy(user_client)

    assert (response.status_code, response.json()["code"]) == (402, "billing_limit")


def test_a_key_deploy_is_assigned_to_its_workspace_in_the_same_transaction(tenancy):
    client = tenancy.client("key:agents:write")

    with CaptureQueriesContext(connection) as captured:
        response = client.post(DEPLOY, {"name": "by-key"}, format="json")

    assert response.status_code == 201
    agent = Agent.objects.get(pk=response.json()["id"])
    assert agent.owner == tenancy.owner  # the key's issuer
    assert list(WorkspaceAgent.objects.filter(agent=agent).values_list("workspace_id", flat=True)) == [
        tenancy.workspace.id
    ]
    sql = [q["sql"] for q in captured.captured_queries]
    insert_agent = next(i for i, s in enumerate(sql) if s.startswith('INSERT INTO "agents_agent"'))
    insert_assignment = next(i for i, s in enumerate(sql) if s.startswith('INSERT INTO "agents_workspaceagent"'))
    between = sql[insert_agent:insert_assignment]
    assert not any(s.startswith(("COMMIT", "RELEASE SAVEPOINT")) for s in between)


def test_a_session_deploy_is_not_assigned_to_any_workspace(tenancy):
    response = tenancy.client("editor").post(DEPLOY, {}, format="json")

    assert not WorkspaceAgent.objects.filter(agent_id=response.json()["id"]).exists()


def test_a_key_without_agents_write_is_403(tenancy):
    response = tenancy.client("key:agents:read").post(DEPLOY, {}, format="json")

    assert (response.status_code, response.json()["code"]) == (403, "missing_scope")
    assert not Agent.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"deploy_target": "remote-docker"},
        {"execution_target_id": "remote:3f1c"},
        {"migration_draft_id": str(uuid.uuid4())},
        {"migration_draft_id": "not even a uuid"},
    ],
)
@pytest.mark.parametrize("key", ["key:agents:write", "key:agents:read"])
def test_session_only_fields_from_a_key_are_403_session_required(tenancy, body, key):
    response = tenancy.client(key).post(DEPLOY, body, format="json")

    assert (response.status_code, response.json()["code"]) == (403, "session_required")
    assert not Agent.objects.exists()


def test_remote_docker_from_a_key_is_refused_before_any_lookup(tenancy):
    client = tenancy.client("key:agents:write")
    client.get("/api/agents")  # warm up: authentication is not what we count

    with CaptureQueriesContext(connection) as captured:
        response = client.post(DEPLOY, {"deploy_target": "remote-docker"}, format="json")

    assert response.status_code == 403
    touched = " ".join(q["sql"] for q in captured.captured_queries)
    assert "agents_" not in touched


def test_no_credential_is_401(api_client):
    response = api_client.post(DEPLOY, {}, format="json")

    assert (response.status_code, response.json()["code"]) == (401, "not_authenticated")


def test_a_body_that_is_not_an_object_is_400(user_client):
    response = user_client.post(DEPLOY, [1, 2], format="json")

    assert response.status_code == 400
