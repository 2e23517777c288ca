"""GET /agents/:id/nemoclaw/status from the lifecycle (the runtime itself is asked in
test_nemoclaw_real): the shape of docs/api.md "Sandbox", the key's presence, access."""

from __future__ import annotations

import pytest

from llm.services import own_key_set
from tests.support import client_for

from .conftest import sandboxed

pytestmark = pytest.mark.django_db


def status_url(agent) -> str:
    return f"/api/agents/{agent.id}/nemoclaw/status"


def test_a_stopped_sandbox_reports_its_lifecycle_state_and_policy_summary(tenancy, agent, settings):
    settings.NVIDIA_API_KEY = ""

    body = client_for(tenancy.viewer).get(status_url(agent)).json()

    assert body == {"sandbox": "nemoclaw", "agentStatus": "stopped", "model": "nvidia/nemotron-3-super-120b-a12b",
                    "inferenceConfigured": False, "policyVersion": 1, "policyApplied": False,
                    "pendingApprovals": 0, "runtime": None}


def test_inference_is_configured_by_the_owners_key_or_the_self_hosted_fallback(tenancy, agent, settings):
    client = client_for(tenancy.viewer)
    settings.NVIDIA_API_KEY = "nvapi-platform"
    assert client.get(status_url(agent)).json()["inferenceConfigured"] is True

    settings.NVIDIA_API_KEY = ""
    own_key_set(user=tenancy.editor, provider="nvidia", api_key="nvapi-someone-else")
    assert client.get(status_url(agent)).json()["inferenceConfigured"] is False  # not the owner's

    own_key_set(user=tenancy.agent_owner, provider="nvidia", api_key="nvapi-the-owners")
    assert client.get(status_url(agent)).json()["inferenceConfigured"] is True


def test_a_running_sandbox_whose_runtime_cannot_be_asked_has_no_runtime_block(tenancy):
    agent = sandboxed(tenancy, status="running", container_id="c" * 64, gateway_host_port=1)

    body = client_for(tenancy.viewer).get(status_url(agent)).json()

    assert (body["agentStatus"], body["runtime"]) == ("running", None)


def test_a_standard_agent_is_400_not_sandboxed(tenancy):
    response = client_for(tenancy.viewer).get(status_url(tenancy.agent()))

    assert (response.status_code, response.json()["code"]) == (400, "not_sandboxed")


@pytest.mark.parametrize(("who", "status"), [
    ("agent_owner", 200), ("owner", 200), ("admin", 200), ("editor", 200), ("viewer", 200),
    ("platform_admin", 200), ("key:agents:read", 200),
    ("key:workspaces:read", 403), ("outsider", 404), ("other-key", 404), ("anonymous", 401),
])
def test_who_may_read_the_status(tenancy, agent, who, status):
    assert tenancy.client(who).get(status_url(agent)).status_code == status


def test_the_admin_lists_policies_and_approvals_read_only(tenancy, agent):
    from sandbox.services import policy_current

    policy_current(agent)
    client = client_for()
    client.force_login(tenancy.platform_admin)

    for name in ("sandboxpolicy", "sandboxapproval"):
        assert client.get(f"/admin/sandbox/{name}/").status_code == 200
        assert client.get(f"/admin/sandbox/{name}/add/").status_code == 403
