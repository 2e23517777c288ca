"""GET/POST /agents/:id/nemoclaw/policy without a runtime: versions, validation, a stopped agent
(stored, applied at its next start), and who may read and write."""

from __future__ import annotations

import pytest

from sandbox.models import SandboxPolicy
from tests.support import client_for

from .conftest import sandboxed

pytestmark = pytest.mark.django_db


def policy_url(agent) -> str:
    return f"/api/agents/{agent.id}/nemoclaw/policy"


def post(client, agent, body):
    return client.post(policy_url(agent), body, format="json")


def test_a_policy_posted_to_a_stopped_agent_is_stored_as_the_next_version_not_yet_applied(tenancy, agent):
    client = client_for(tenancy.editor)

    response = post(client, agent, {"exec": {"mode": "allowlist", "allow": [{"pattern": "node", "argPattern": "^-v$"}]},
                                    "network": {"allow": ["api.example.com:443"], "deny": ["*.bad.example"]}})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["version"], body["applied"], body["appliedAt"], body["networkEnforced"]) == (2, False, None, False)
    assert body["policy"]["exec"] == {"mode": "allowlist", "allow": [{"pattern": "node", "argPattern": "^-v$"}]}
    assert body["policy"]["network"] == {"allow": ["api.example.com:443"], "deny": ["*.bad.example"]}
    assert body["policy"]["tools"] == {"profile": "coding", "allow": [], "deny": []}  # kept from version 1
    assert client.get(policy_url(agent)).json() == body
    assert SandboxPolicy.objects.get(agent=agent, version=2).created_by == tenancy.editor


def test_each_post_is_a_new_version_and_sections_left_out_keep_their_values(tenancy, agent):
    client = client_for(tenancy.editor)
    post(client, agent, {"tools": {"profile": "minimal", "deny": ["group:fs"]}})

    body = post(client, agent, {"model": "nvidia/nemotron-3-nano-30b-a3b"}).json()

    assert body["version"] == 3
    assert body["policy"]["tools"] == {"profile": "minimal", "allow": [], "deny": ["group:fs"]}
    assert body["policy"]["model"] == "nvidia/nemotron-3-nano-30b-a3b"
    assert list(SandboxPolicy.objects.filter(agent=agent).values_list("version", flat=True)) == [3, 2, 1]


@pytest.mark.parametrize(("body", "field"), [
    ([], "non_field_errors"),
    ({"exec": {"mode": "sometimes"}}, "exec.mode"),
    ({"exec": "ask"}, "exec"),
    ({"exec": {"mode": "ask", "allow": "node"}}, "exec.allow"),
    ({"exec": {"mode": "ask", "allow": [{"pattern": ""}]}}, "exec.allow[0].pattern"),
    ({"exec": {"mode": "ask", "allow": [{"pattern": "node", "argPattern": "("}]}}, "exec.allow[0].argPattern"),
    ({"exec": {"mode": "ask", "allow": [{"pattern": "node", "shell": True}]}}, "exec.allow[0].shell"),
    ({"exec": {"mode": "ask", "allow": [{"pattern": "n"}] * 101}}, "exec.allow"),
    ({"tools": {"profile": "everything"}}, "tools.profile"),
    ({"tools": {"allow": ["exec", "rm -rf"]}}, "tools.allow[1]"),
    ({"tools": {"deny": [7]}}, "tools.deny[0]"),
    ({"network": {"allow": ["http://x.example"]}}, "network.allow[0]"),
    ({"network": {"allow": ["x.example:70000"]}}, "network.allow[0]"),
    ({"network": {"deny": "x.example"}}, "network.deny"),
    ({"model": "gpt-4o"}, "model"),
    ({"filesystem": {}}, "filesystem"),
])
def test_an_invalid_document_is_400_naming_the_field_and_stores_nothing(tenancy, agent, body, field):
    response = post(client_for(tenancy.editor), agent, body)

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"], response.json()
    assert not SandboxPolicy.objects.filter(agent=agent, version__gt=1).exists()


def test_every_model_of_the_spec_is_accepted(tenancy, agent):
    client = client_for(tenancy.editor)
    for model in ("nvidia/nemotron-3-super-120b-a12b", "nvidia/llama-3.1-nemotron-ultra-253b-v1",
                  "nvidia/llama-3.3-nemotron-super-49b-v1.5", "nvidia/nemotron-3-nano-30b-a3b"):
        assert post(client, agent, {"model": model}).json()["policy"]["model"] == model


def test_a_standard_agent_is_400_not_sandboxed(tenancy):
    agent = tenancy.agent()
    client = client_for(tenancy.editor)

    for response in (client.get(policy_url(agent)), post(client, agent, {"exec": {"mode": "deny"}})):
        assert (response.status_code, response.json()["code"]) == (400, "not_sandboxed")


def test_an_unknown_agent_is_404(tenancy):
    assert client_for(tenancy.editor).get("/api/agents/00000000-0000-0000-0000-000000000000/nemoclaw/policy"
                                          ).status_code == 404


READERS = ["agent_owner", "owner", "admin", "editor", "viewer", "platform_admin", "key:agents:read"]
WRITERS = ["agent_owner", "owner", "admin", "editor", "platform_admin", "key:agents:write"]
REFUSED = [("key:workspaces:read", 403), ("outsider", 404), ("other-key", 404), ("anonymous", 401)]


@pytest.mark.parametrize(("who", "status"), [(w, 200) for w in READERS] + REFUSED)
def test_who_may_read_the_policy(tenancy, agent, who, status):
    assert tenancy.client(who).get(policy_url(agent)).status_code == status


@pytest.mark.parametrize(("who", "status"), [(w, 200) for w in WRITERS] + [
    ("viewer", 403), ("key:agents:read", 403)] + REFUSED)
def test_who_may_post_a_policy(tenancy, agent, who, status):
    response = post(tenancy.client(who), agent, {"exec": {"mode": "deny"}})

    assert response.status_code == status, response.content
    assert SandboxPolicy.objects.filter(agent=agent, version=2).exists() == (status == 200)


def test_a_running_agent_whose_runtime_cannot_take_it_now_answers_not_applied(tenancy):
    agent = sandboxed(tenancy, status="running", container_id="c" * 64, gateway_host_port=1)

    response = post(client_for(tenancy.editor), agent, {"exec": {"mode": "deny"}})

    assert response.status_code == 200
    assert (response.json()["version"], response.json()["applied"]) == (2, False)
