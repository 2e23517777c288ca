"""POST /api/agents/:id/chat and the history routes without a runtime: what they refuse, and
why (access from every caller is the authorization matrix's; turns on real runtimes are
test_chat_real.py's)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from fleet.models import StreamLease
from tests.infra.asgi import edge_request

pytestmark = pytest.mark.django_db


def _chat(agent, body, *, key: str) -> tuple[int, dict]:
    response = edge_request("POST", f"/api/agents/{agent.pk}/chat", body=json.dumps(body).encode(),
                            headers={"x-api-key": key, "content-type": "application/json"})
    return response.status, response.json()


@pytest.mark.parametrize(("body", "field"), [
    ({}, "message"),
    ({"message": "   "}, "message"),
    ({"message": 42}, "message"),
    ({"message": "x" * 32_001}, "message"),
    ({"message": "bell \x07"}, "message"),
    ({"message": "hi", "sessionId": "../../etc/passwd"}, "sessionId"),
    ({"message": "hi", "sessionId": ""}, "sessionId"),
    ({"message": "hi", "sessionId": 7}, "sessionId"),
])
@pytest.mark.django_db(transaction=True)
def test_a_bad_body_is_400_naming_the_field(tenancy, body, field):
    agent = tenancy.agent(status="running", container_id="abc")

    status, answer = _chat(agent, body, key=tenancy.key("agents:write"))

    assert status == 400 and answer["code"] == "validation_error" and field in answer["fields"]


@pytest.mark.django_db(transaction=True)
def test_a_message_keeps_its_line_breaks_and_a_stopped_agent_is_409(tenancy):
    agent = tenancy.agent()  # stopped

    status, answer = _chat(agent, {"message": "line one\nline two\ttabbed"}, key=tenancy.key("agents:write"))

    assert (status, answer["code"]) == (409, "agent_not_running")
    assert StreamLease.objects.count() == 0  # the refused turn gave its stream back


@pytest.mark.django_db(transaction=True)
def test_a_user_with_every_stream_open_gets_429(tenancy, settings):
    settings.STREAM_LIMIT_PER_USER = 2
    agent = tenancy.agent(status="running", container_id="abc")
    now = timezone.now()
    for _ in range(2):  # two live streams of the key's issuer, held by another process
        StreamLease.objects.create(user=tenancy.owner, kind="event-stream", holder="elsewhere:1:1", opened_at=now,
                                   expires_at=now + timedelta(seconds=60))
    StreamLease.objects.create(user=tenancy.owner, kind="event-stream", holder="dead:1:1", opened_at=now,
                               expires_at=now - timedelta(seconds=1))  # lapsed: it counts no more

    status, answer = _chat(agent, {"message": "hello"}, key=tenancy.key("agents:write"))

    assert (status, answer["code"]) == (429, "too_many_streams")


def test_a_server_that_is_not_the_edge_refuses_to_stream_a_turn(tenancy):
    agent = tenancy.agent(status="running", container_id="abc")

    response = tenancy.client("editor").post(f"/api/agents/{agent.pk}/chat", {"message": "hi"}, format="json")

    assert (response.status_code, response.json()["code"]) == (409, "streams_unavailable")


def test_history_of_a_stopped_agent_is_409(tenancy):
    agent = tenancy.agent()

    sessions = tenancy.client("editor").get(f"/api/agents/{agent.pk}/chat/sessions")
    messages = tenancy.client("editor").get(f"/api/agents/{agent.pk}/chat/sessions/agent:main:x/messages")

    assert (sessions.status_code, sessions.json()["code"]) == (409, "agent_not_running")
    assert (messages.status_code, messages.json()["code"]) == (409, "agent_not_running")
