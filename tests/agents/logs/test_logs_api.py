"""GET /api/agents/:id/logs: the query's 400s, the 409s, and on a real container (the test
runtime image) lines with their stream, tail and since, and the live follow as events."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import pytest

from accounts.tokens import session_token_issue
from fleet.models import StreamLease
from tests.factories.agents import place_on_engine
from tests.infra.asgi import edge_stream
from tests.infra.docker import exec_in

pytestmark = pytest.mark.django_db


def _url(agent, query: str = "") -> str:
    return f"/api/agents/{agent.id}/logs{query}"


@pytest.mark.parametrize(("query", "field"), [
    ("?tail=abc", "tail"), ("?tail=5001", "tail"), ("?tail=-1", "tail"), ("?since=yesterday", "since"),
    ("?since=nan", "since"), ("?tail=1.5&since=2026-13-01T00:00:00Z", "tail"),
])
def test_a_bad_query_is_400_naming_the_field(tenancy, query, field):
    agent = tenancy.agent(container_id="abc")

    response = tenancy.client("viewer").get(_url(agent, query))

    body = response.json()
    assert response.status_code == 400
    assert body["code"] == "validation_error" and field in body["fields"] and body["error"]


def test_a_bad_query_is_400_in_json_for_an_event_stream_caller_too(tenancy):
    agent = tenancy.agent(container_id="abc")

    response = tenancy.client("viewer").get(_url(agent, "?tail=x"), HTTP_ACCEPT="text/event-stream")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")


def test_a_target_without_logs_is_409_unsupported(tenancy):
    agent = tenancy.agent(container_id="abc", deploy_target="k8s", execution_target_id="k8s:cluster-1")

    response = tenancy.client("viewer").get(_url(agent))

    assert (response.status_code, response.json()["code"]) == (409, "unsupported")


def test_an_agent_without_a_workload_is_409_no_container(tenancy):
    for agent in (tenancy.agent(container_id=""), tenancy.agent(is_external=True, container_id="")):
        response = tenancy.client("viewer").get(_url(agent))
        assert (response.status_code, response.json()["code"]) == (409, "no_container")


def test_an_unreachable_engine_is_502(tenancy, settings):
    settings.DOCKER_HOST = "unix:///nonexistent/fleet-logs.sock"
    agent = tenancy.agent(container_id="abc")

    response = tenancy.client("viewer").get(_url(agent))

    assert (response.status_code, response.json()["code"]) == (502, "daemon_unreachable")


# -- a real container --------------------------------------------------------------------------


@pytest.fixture
def agent(tenancy, docker_settings):
    agent = place_on_engine(tenancy.agent(name="logs-agent"))
    yield agent
    from agents.backends.engine import backend_of

    backend_of(agent).remove(agent)


def _write(docker_engine, agent, *lines: tuple[str, str]) -> None:
    """Lines as the workload's own output: written to PID 1's stdout or stderr."""
    script = "; ".join(f"echo '{text}' > /proc/1/fd/{1 if stream == 'stdout' else 2}" for stream, text in lines)
    result = exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", script])
    assert result.exit_code == 0, result.output


@pytest.mark.docker
def test_lines_come_with_their_stream_and_time_and_tail_and_since_cut_them(agent, tenancy, docker_engine):
    client = tenancy.client("key:agents:read")
    _write(docker_engine, agent, ("stdout", "first out"))
    time.sleep(0.05)  # the engine reads stdout and stderr apart: lines of both at once come in either order
    _write(docker_engine, agent, ("stderr", "first err"))
    time.sleep(0.05)
    middle = datetime.now(UTC)
    time.sleep(0.05)
    _write(docker_engine, agent, ("stdout", "second out"))

    everything = client.get(_url(agent, "?tail=5000")).json()
    last_one = client.get(_url(agent, "?tail=1")).json()
    since = client.get(_url(agent, f"?since={middle.isoformat().replace('+00:00', 'Z')}")).json()

    mine = [(row["stream"], row["line"]) for row in everything if row["line"].startswith(("first", "second"))]
    assert mine == [("stdout", "first out"), ("stderr", "first err"), ("stdout", "second out")]
    assert all(datetime.fromisoformat(row["ts"].replace("Z", "+00:00")) > middle - timedelta(minutes=1)
               for row in everything if row["line"].startswith("first"))
    assert [row["line"] for row in last_one] == ["second out"]
    assert [row["line"] for row in since] == ["second out"]


def _follow(agent, key: str, query: str = "", **headers):
    return edge_stream("GET", _url(agent, query), headers={"x-api-key": key, "accept": "text/event-stream", **headers})


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_the_follow_streams_new_lines_as_events_and_ends_with_a_reconnect(agent, tenancy, docker_engine, settings):
    settings.LOGS_FOLLOW_SECONDS = 3
    settings.LOGS_HEARTBEAT_SECONDS = 0.5
    _write(docker_engine, agent, ("stdout", "before the follow"))

    with _follow(agent, tenancy.key("agents:read"), "?tail=1") as stream:
        assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream"
        seen = stream.read_until(b"before the follow")
        _write(docker_engine, agent, ("stderr", "during the follow"))
        seen += stream.read_until(b"event: reconnect")  # the cap ends it

    body = seen.decode()
    lines = [json.loads(part[len("data: "):]) for part in body.split("\n") if part.startswith("data: {\"")]
    assert body.startswith("retry: ")
    assert [(line["stream"], line["line"]) for line in lines] == [("stdout", "before the follow"),
                                                                  ("stderr", "during the follow")]
    assert ": heartbeat" in body
    assert body.endswith("data: {}\n\n") and f"event: reconnect\nid: {lines[-1]['ts']}" in body


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_reconnect_with_last_event_id_starts_after_that_line(agent, tenancy, docker_engine, settings):
    settings.LOGS_FOLLOW_SECONDS = 1
    key = tenancy.key("agents:read")
    _write(docker_engine, agent, ("stdout", "old line"))
    old = tenancy.client("viewer").get(_url(agent, "?tail=1")).json()[0]
    _write(docker_engine, agent, ("stdout", "new line"))

    with _follow(agent, key, **{"last-event-id": old["ts"]}) as stream:
        body = stream.read_until(b"event: reconnect").decode()

    assert "new line" in body and "old line" not in body


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_client_that_leaves_ends_the_follow_and_frees_its_stream(agent, tenancy, docker_engine, settings):
    settings.LOGS_FOLLOW_SECONDS = 60
    _write(docker_engine, agent, ("stdout", "one line"))
    with _follow(agent, tenancy.key("agents:read"), "?tail=1") as stream:
        assert b"one line" in stream.read_until(b"one line")
        assert StreamLease.objects.count() == 1
        started = time.monotonic()
        stream.leave()
        assert stream.ended.wait(5)

    assert time.monotonic() - started < 5
    assert StreamLease.objects.count() == 0


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_a_user_holds_at_most_the_streams_allowed_and_one_more_is_429(agent, tenancy, docker_engine, settings):
    settings.STREAM_LIMIT_PER_USER = 2
    key = tenancy.key("agents:read")
    with _follow(agent, key) as first, _follow(agent, key) as second, _follow(agent, key) as third:
        assert (first.status, second.status, third.status) == (200, 200, 429)
        assert json.loads(third.read_until(b"}"))["code"] == "too_many_streams"
        # Another user (here the workspace's viewer, by session) has room of their own.
        with _follow(agent, "", authorization=f"Bearer {session_token_issue(user=tenancy.viewer)}") as other:
            assert other.status == 200


def test_a_server_that_is_not_the_edge_refuses_to_follow(tenancy):
    agent = tenancy.agent(container_id="abc")

    response = tenancy.client("viewer").get(_url(agent), HTTP_ACCEPT="text/event-stream")

    assert (response.status_code, response.json()["code"]) == (409, "streams_unavailable")
