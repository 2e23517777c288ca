"""Who may call each channel route (the agents issue's matrix): readers read, operators write,
outsiders and keys of another workspace get 404, no credential 401, low roles 403.

The agents are stopped, so routes that need the runtime answer 409 agent_not_running to those
who get through access control, without an engine."""

from __future__ import annotations

import pytest

from channels.services import legacy_channel_create
from tests.agents.test_access_matrix import CALLERS, OPERATORS, READERS, _expected

pytestmark = pytest.mark.django_db

TELEGRAM = {"type": "telegram", "config": {"botToken": "123:abc"}}

# name: (agent runtime, method, path suffix, body, allowed callers, (status, code) on success)
ROUTES = {
    "list": ("openclaw", "get", "", None, READERS, (200, None)),
    "type": ("openclaw", "get", "/types/telegram", None, READERS, (200, None)),
    "save": ("openclaw", "post", "", TELEGRAM, OPERATORS, (200, None)),
    "patch": ("openclaw", "patch", "/telegram", {"config": {"botToken": "1:x"}}, OPERATORS, (200, None)),
    "connect": ("openclaw", "post", "/whatsapp/connect", None, OPERATORS, (409, "agent_not_running")),
    "login": ("openclaw", "post", "/whatsapp/login", None, OPERATORS, (409, "agent_not_running")),
    "login-wait": ("openclaw", "post", "/whatsapp/login/wait", {}, OPERATORS, (409, "agent_not_running")),
    "logout": ("openclaw", "post", "/whatsapp/logout", None, OPERATORS, (409, "agent_not_running")),
    "legacy-list": ("hermes", "get", "", None, READERS, (200, None)),
    "legacy-create": ("hermes", "post", "", {"type": "email", "config": {"to": ["a@example.com"]}}, OPERATORS,
                      (201, None)),
    "legacy-patch": ("hermes", "patch", "/{cid}", {"enabled": False}, OPERATORS, (200, None)),
    "legacy-delete": ("hermes", "delete", "/{cid}", None, OPERATORS, (200, None)),
    "legacy-test": ("hermes", "post", "/{cid}/test", None, OPERATORS, (200, None)),
    "legacy-messages": ("hermes", "get", "/{cid}/messages", None, READERS, (200, None)),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_caller_gets_the_answer_its_role_allows(tenancy, route, caller):
    runtime, method, suffix, body, allowed, success = ROUTES[route]
    agent = tenancy.agent(runtime_family=runtime)
    if "{cid}" in suffix:
        channel = legacy_channel_create(agent=agent, type_="email", config={"to": ["ops@example.com"]})
        suffix = suffix.replace("{cid}", str(channel.pk))

    response = getattr(tenancy.client(caller), method)(f"/api/agents/{agent.id}/channels{suffix}", body,
                                                       format="json")

    status, code = _expected(caller, allowed, success)
    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code


@pytest.mark.parametrize("method", ["head", "options"])
def test_head_and_options_pass_the_reading_checks(tenancy, method):
    agent = tenancy.agent(runtime_family="openclaw")

    response = getattr(tenancy.client("outsider"), method)(f"/api/agents/{agent.id}/channels")

    assert response.status_code == 404
