"""Enablement at deploy: nemoclaw only when enabled, only OpenClaw, not on proxmox, mirrored in
sandbox_type; a new sandbox's policy is the default (exec ask, tools coding, the default model)."""

from __future__ import annotations

import pytest

from agents.services.selection import DeployRequest, _sandbox_profile
from fleet.errors import ValidationFailed
from tests.support import client_for

pytestmark = pytest.mark.django_db


def deploy(client, **body):
    return client.post("/api/agents/deploy", body, format="json")


def test_a_nemoclaw_deploy_mirrors_the_profile_and_starts_with_the_default_policy(user):
    client = client_for(user)
    created = deploy(client, sandbox_profile="nemoclaw")
    assert created.status_code == 201, created.content
    assert (created.json()["sandbox_profile"], created.json()["sandbox_type"]) == ("nemoclaw", "nemoclaw")

    policy = client.get(f"/api/agents/{created.json()['id']}/nemoclaw/policy").json()

    assert (policy["version"], policy["applied"], policy["appliedAt"]) == (1, False, None)
    assert policy["policy"] == {
        "exec": {"mode": "ask", "allow": []},
        "tools": {"profile": "coding", "allow": [], "deny": []},
        "network": {"allow": [], "deny": []},
        "model": "nvidia/nemotron-3-super-120b-a12b",
    }


def test_nemoclaw_is_refused_when_the_server_does_not_enable_it(user, settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard"]

    response = deploy(client_for(user), sandbox_profile="nemoclaw")

    assert response.status_code == 400
    assert "not enabled" in response.json()["fields"]["sandbox_profile"][0]


def test_hermes_with_nemoclaw_is_400(user):
    response = deploy(client_for(user), runtime_family="hermes", sandbox_profile="nemoclaw")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert "sandbox_profile" in response.json()["fields"]


@pytest.mark.parametrize(("target", "allowed"), [
    ("docker", True), ("k8s", True), ("remote-docker", True), ("proxmox", False),
])
def test_the_profile_rule_of_each_target(target, allowed):
    # k8s, remote-docker and proxmox have no backend on this server, so deploy stops at the
    # placement first: the profile rule itself is checked here.
    request = DeployRequest(sandbox_profile="nemoclaw")
    if allowed:
        assert _sandbox_profile(request, runtime_family="openclaw", deploy_target=target) == "nemoclaw"
    else:
        with pytest.raises(ValidationFailed) as refused:
            _sandbox_profile(request, runtime_family="openclaw", deploy_target=target)
        assert "proxmox" in refused.value.fields["sandbox_profile"][0]
