"""Chat with a real OpenClaw 2026.9.6 and a real Hermes 0.19.0 through Fleet's own ASGI
application (what the Procfile's web process serves), the loopback fake model answering: the
turn streams its deltas and ends with `done` and its usage, the usage reaches the cost report,
the conversation continues by its id and its history is read back from the runtime."""

from __future__ import annotations

import json

import pytest

from accounts.tokens import session_token_issue
from tests.factories.agents import WorkspaceAgentFactory
from tests.infra.asgi import edge_request, edge_stream
from tests.infra.fake_model import ANSWER, USAGE
from tests.infra.runtimes import FAKE_PROVIDER

pytestmark = [pytest.mark.runtime, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
# Reads what the runtimes hold and adds conversations, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True


def events_of(body: bytes) -> list[tuple[str, dict]]:
    """(event, data) of every event of an SSE body; comments skipped."""
    found = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "data" in fields:
            found.append((fields.get("event", "message"), json.loads(fields["data"])))
    return found


def _turn(agent, headers, message: str, session_id: str | None = None) -> list[tuple[str, dict]]:
    body = {"message": message, **({"sessionId": session_id} if session_id else {})}
    with edge_stream("POST", f"/api/agents/{agent.pk}/chat", body=json.dumps(body).encode(),
                     headers={**headers, "content-type": "application/json"}) as stream:
        assert stream.status == 200, stream.next_chunk()
        assert stream.headers["content-type"] == "text/event-stream"
        seen = stream.read_until(b"event: done", timeout=120)
    return events_of(seen)


@pytest.fixture(params=["openclaw", "hermes"])
def chatting(request, tenancy):
    runtime = request.getfixturevalue(f"{request.param}_runtime")
    agent = runtime.agent(owner=tenancy.agent_owner, name=f"chat-{request.param}")
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return request.param, agent


def test_a_turn_streams_its_deltas_and_its_usage_reaches_the_cost_report(chatting, tenancy, fake_model):
    family, agent = chatting
    headers = {"x-api-key": tenancy.key("agents:write", "workspaces:read")}

    events = _turn(agent, headers, "Say something.")

    kinds = [kind for kind, _ in events]
    assert kinds[0] == "delta" and kinds[-1] == "done" and "error" not in kinds, events
    assert "".join(data["text"] for kind, data in events if kind == "delta") == ANSWER
    done = events[-1][1]
    assert done["sessionId"]
    assert done["usage"]["inputTokens"] == USAGE["prompt_tokens"]
    assert done["usage"]["outputTokens"] == USAGE["completion_tokens"]
    assert done["usage"]["model"] == fake_model.model_id
    if family == "openclaw":
        assert done["usage"]["provider"] == FAKE_PROVIDER and done["usage"]["costUsd"] > 0

    report = edge_request("GET", "/api/workspaces/cost?period_days=1", headers=headers).json()
    row = next(r for w in report["workspaces"] for r in w["perAgent"] if r["agentId"] == str(agent.pk))
    assert (row["input_tokens"], row["output_tokens"]) == (USAGE["prompt_tokens"], USAGE["completion_tokens"])


def test_a_conversation_continues_by_its_id_and_its_history_is_read_back(chatting, tenancy):
    _, agent = chatting
    headers = {"authorization": f"Bearer {session_token_issue(user=tenancy.editor)}"}

    first = _turn(agent, headers, "Remember the word teal.")
    session_id = first[-1][1]["sessionId"]
    second = _turn(agent, headers, "Which word?", session_id=session_id)
    assert second[-1][1]["sessionId"] == session_id

    sessions = edge_request("GET", f"/api/agents/{agent.pk}/chat/sessions", headers=headers).json()
    assert session_id in [row["id"] for row in sessions]
    messages = edge_request("GET", f"/api/agents/{agent.pk}/chat/sessions/{session_id}/messages",
                            headers=headers).json()
    said = [row["text"] for row in messages if row["role"] == "user"]
    assert said[-2:] == ["Remember the word teal.", "Which word?"]
    assert [row["text"] for row in messages if row["role"] == "assistant"][-1] == ANSWER
