"""Who may call the files and export routes, on an agent shared into a workspace. Every key is
403 session_required before any lookup; sessions get the agent access rules. The agent has no
container, so a caller let through reaches the state rules without an engine (409 / 400
no_container)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

CALLERS = ("agent_owner", "owner", "admin", "editor", "viewer", "platform_admin", "key:agents:write",
           "key:agents:read", "key:workspaces:read", "other-key", "outsider", "anonymous")
READERS = {"agent_owner", "owner", "admin", "editor", "viewer", "platform_admin"}
EDITORS = READERS - {"viewer"}

ROUTES = {
    "list root": ("get", "files/", READERS, (409, "no_container")),
    "read": ("get", "files/notes.md", READERS, (409, "no_container")),
    "write": ("put", "files/notes.md", EDITORS, (400, "no_container")),
    "delete": ("delete", "files/notes.md", EDITORS, (400, "no_container")),
    "export": ("get", "export", EDITORS, (409, "no_container")),
}


def _expected(caller: str, allowed: set[str], success):
    if caller in allowed:
        return success
    if caller == "anonymous":
        return (401, "not_authenticated")
    if caller.startswith("key:") or caller == "other-key":
        return (403, "session_required")
    if caller == "outsider":
        return (404, "not_found")
    return (403, "permission_denied")


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("caller", CALLERS)
def test_each_caller_gets_what_the_contract_says(tenancy, route, caller):
    method, suffix, allowed, success = ROUTES[route]
    agent = tenancy.agent()
    client = tenancy.client(caller)

    response = getattr(client, method)(f"/api/agents/{agent.id}/{suffix}", b"x" if method == "put" else None,
                                       content_type="application/octet-stream")

    assert (response.status_code, response.json()["code"]) == _expected(caller, allowed, success)


@pytest.mark.parametrize("caller", ["key:agents:write", "other-key"])
def test_a_key_is_refused_before_any_lookup_of_an_unknown_agent(tenancy, caller):
    response = tenancy.client(caller).get("/api/agents/6f1c1f43-77a4-4d0f-9d8f-5a1b0c0e1a11/files/")
    assert (response.status_code, response.json()["code"]) == (403, "session_required")


def test_an_agent_on_a_target_without_a_backend_is_409_unsupported(tenancy):
    agent = tenancy.agent(container_id="abc", deploy_target="k8s", execution_target_id="k8s:cluster-1")
    client = tenancy.client("agent_owner")

    for response in (client.get(f"/api/agents/{agent.id}/files/"), client.get(f"/api/agents/{agent.id}/export"),
                     client.put(f"/api/agents/{agent.id}/files/a", b"x", content_type="application/octet-stream")):
        assert (response.status_code, response.json()["code"]) == (409, "unsupported")


def test_an_adopted_agent_has_no_state_here(tenancy):
    agent = tenancy.agent(is_external=True, container_id="")
    response = tenancy.client("agent_owner").get(f"/api/agents/{agent.id}/files/")
    assert (response.status_code, response.json()["code"]) == (409, "no_container")


def test_a_chunked_body_is_refused_rather_than_written_empty(tenancy):
    agent = tenancy.agent()
    response = tenancy.client("agent_owner").put(f"/api/agents/{agent.id}/files/a.txt", b"x",
                                                 content_type="application/octet-stream",
                                                 HTTP_TRANSFER_ENCODING="chunked")
    assert (response.status_code, response.json()["code"]) == (400, "bad_request")
