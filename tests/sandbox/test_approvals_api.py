"""Approvals without a runtime: the listener's hook handler turns the runtime's events into rows
and a `sandbox.approval_requested` event; GET lists pending ones; POST refuses unknown (404), bad
(400), decided and expired (409) requests; who may read and decide."""

from __future__ import annotations

import time
import uuid

import pytest

from agents.gateway.hooks import listener_hook
from fleet.models import Event
from sandbox.models import ApprovalStatus, SandboxApproval
from sandbox.services import approvals_forget_pending
from sandbox.subscriptions import on_agent_event
from tests.support import client_for

from .conftest import sandboxed

pytestmark = pytest.mark.django_db



class _Hook:
    """The hook the sandbox app registered, looked up when used."""

    def __getattr__(self, name):
        return getattr(listener_hook("sandbox.approvals"), name)


HOOK = _Hook()


@pytest.fixture
def agent(tenancy):
    return sandboxed(tenancy, status="running", container_id="c" * 64, gateway_host_port=1)


def requested(agent, request_id: str | None = None, *, command="node --version", expires_in_s=1800.0):
    """Hand the hook what the runtime sends (RUNTIMES.md), as the listener does."""
    now_ms = time.time() * 1000
    request_id = request_id or str(uuid.uuid4())
    HOOK.handler(str(agent.pk), "exec.approval.requested", {
        "id": request_id,
        "request": {"command": command, "cwd": "/state/workspace", "agentId": "main", "sessionKey": "agent:main:x",
                    "allowedDecisions": ["allow-once", "allow-always", "deny"]},
        "createdAtMs": now_ms, "expiresAtMs": now_ms + expires_in_s * 1000,
    })
    return request_id


def approvals_url(agent, tail: str = "") -> str:
    return f"/api/agents/{agent.id}/nemoclaw/approvals{tail}"


def test_the_hook_asks_for_approvals_of_sandboxed_agents_with_the_grant_they_need(tenancy, agent):
    from agents.models import Agent

    standard = tenancy.agent(status="running")
    wanted = HOOK.wants(Agent.objects.all())

    assert set(wanted) == {agent} and standard not in wanted
    assert HOOK.events == {"exec.approval.requested", "exec.approval.resolved"}
    assert HOOK.scopes == {"operator.admin", "operator.approvals"}
    assert HOOK.caps == {"approvals", "exec-approvals"}


def test_a_request_becomes_a_pending_row_listed_by_get_and_an_event_for_the_agents_workspaces(tenancy, agent):
    request_id = requested(agent)

    body = client_for(tenancy.viewer).get(approvals_url(agent)).json()

    (approval,) = body
    assert approval["id"] == request_id
    assert (approval["kind"], approval["command"], approval["cwd"], approval["status"]) == (
        "exec", "node --version", "/state/workspace", "pending")
    assert approval["allowedDecisions"] == ["allow-once", "allow-always", "deny"]
    assert approval["expiresAt"] > approval["createdAt"]
    assert (approval["decidedBy"], approval["decidedAt"]) == (None, None)
    event = Event.objects.get(kind="sandbox.approval_requested")
    assert event.workspace_ids == [str(tenancy.workspace.id)]
    assert (event.data["requestId"], event.data["command"], event.data["agent"]["id"]) == (
        request_id, "node --version", str(agent.id))


def test_the_same_request_seen_twice_is_stored_and_announced_once(agent):
    request_id = requested(agent)
    requested(agent, request_id)

    assert SandboxApproval.objects.filter(agent=agent).count() == 1
    assert Event.objects.filter(kind="sandbox.approval_requested").count() == 1


def test_requests_of_a_standard_agent_are_ignored(tenancy):
    standard = tenancy.agent(status="running")
    requested(standard)

    assert not SandboxApproval.objects.exists()


def test_nothing_pending_is_an_empty_list_also_for_a_stopped_agent(tenancy, agent):
    client = client_for(tenancy.viewer)
    assert client.get(approvals_url(agent)).json() == []
    requested(agent)

    agent.status = "stopped"
    agent.save(update_fields=["status"])

    response = client.get(approvals_url(agent))
    assert (response.status_code, response.json()) == (200, [])


def test_a_resolved_event_records_the_runtimes_decision_and_one_without_a_decision_expires(agent):
    approved, gone = requested(agent), requested(agent)

    HOOK.handler(str(agent.pk), "exec.approval.resolved", {"id": approved, "decision": "allow-once"})
    HOOK.handler(str(agent.pk), "exec.approval.resolved", {"id": gone})

    assert SandboxApproval.objects.get(request_id=approved).status == ApprovalStatus.APPROVED
    assert SandboxApproval.objects.get(request_id=gone).status == ApprovalStatus.EXPIRED


def test_a_request_past_its_deadline_is_marked_expired_and_not_listed(tenancy, agent):
    request_id = requested(agent, expires_in_s=-1)
    client = client_for(tenancy.editor)

    assert client.get(approvals_url(agent)).json() == []
    assert SandboxApproval.objects.get(request_id=request_id).status == ApprovalStatus.EXPIRED
    response = client.post(approvals_url(agent, f"/{request_id}"), {"decision": "approve"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "approval_expired")


def test_a_start_or_restart_expires_what_the_runtime_forgot(agent):
    request_id = requested(agent)
    on_agent_event(Event(kind="agent.restarted", agent_id=agent.pk))

    assert SandboxApproval.objects.get(request_id=request_id).status == ApprovalStatus.EXPIRED
    assert approvals_forget_pending(agent_id=agent.pk) == 0


def test_an_unknown_request_is_404(tenancy, agent):
    response = client_for(tenancy.editor).post(approvals_url(agent, "/nope"), {"decision": "approve"}, format="json")

    assert response.status_code == 404


@pytest.mark.parametrize("body", [{}, {"decision": "allow-once"}, {"decision": "maybe"}, {"decision": None}])
def test_a_bad_decision_is_400(tenancy, agent, body):
    request_id = requested(agent)

    response = client_for(tenancy.editor).post(approvals_url(agent, f"/{request_id}"), body, format="json")

    assert response.status_code == 400
    assert "decision" in response.json()["fields"]
    assert SandboxApproval.objects.get(request_id=request_id).status == ApprovalStatus.PENDING


def test_a_request_already_decided_is_409(tenancy, agent):
    request_id = requested(agent)
    HOOK.handler(str(agent.pk), "exec.approval.resolved", {"id": request_id, "decision": "deny"})

    response = client_for(tenancy.editor).post(approvals_url(agent, f"/{request_id}"), {"decision": "approve"},
                                               format="json")

    assert (response.status_code, response.json()["code"]) == (409, "approval_decided")


def test_a_runtime_that_cannot_be_reached_leaves_the_request_pending(tenancy, agent):
    request_id = requested(agent)  # the agent's gateway port 1 answers nothing

    response = client_for(tenancy.editor).post(approvals_url(agent, f"/{request_id}"), {"decision": "approve"},
                                               format="json")

    assert response.status_code == 502
    assert SandboxApproval.objects.get(request_id=request_id).status == ApprovalStatus.PENDING


def test_a_standard_agent_is_400_not_sandboxed(tenancy):
    standard = tenancy.agent(status="running")
    client = client_for(tenancy.editor)

    for response in (client.get(approvals_url(standard)),
                     client.post(approvals_url(standard, "/x"), {"decision": "deny"}, format="json")):
        assert (response.status_code, response.json()["code"]) == (400, "not_sandboxed")


READERS = ["agent_owner", "owner", "admin", "editor", "viewer", "platform_admin", "key:agents:read"]
REFUSED = [("key:workspaces:read", 403), ("outsider", 404), ("other-key", 404), ("anonymous", 401)]


@pytest.mark.parametrize(("who", "status"), [(w, 200) for w in READERS] + REFUSED)
def test_who_may_list_approvals(tenancy, agent, who, status):
    requested(agent)

    response = tenancy.client(who).get(approvals_url(agent))

    assert response.status_code == status
    assert status != 200 or len(response.json()) == 1


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("key:agents:read", 403)] + REFUSED)
def test_who_may_not_decide(tenancy, agent, who, status):
    request_id = requested(agent)

    response = tenancy.client(who).post(approvals_url(agent, f"/{request_id}"), {"decision": "deny"}, format="json")

    assert response.status_code == status
    assert SandboxApproval.objects.get(request_id=request_id).status == ApprovalStatus.PENDING


@pytest.mark.parametrize("who", ["agent_owner", "owner", "admin", "editor", "platform_admin", "key:agents:write"])
def test_who_may_decide_reaches_the_runtime(tenancy, agent, who):
    # No runtime listens here: passing the access checks shows as the runtime being unreachable.
    request_id = requested(agent)

    response = tenancy.client(who).post(approvals_url(agent, f"/{request_id}"), {"decision": "deny"}, format="json")

    assert (response.status_code, response.json()["code"]) == (502, "gateway_unreachable")
