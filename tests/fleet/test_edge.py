"""The async edge (fleet.edge): the router, the bridge to Django's WSGI handler, and the caps
on live streams. Streams and WebSockets of the apps are tested with their routes."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from agents.gateway.async_http import _session, close_pool
from fleet.edge import routes, streams
from fleet.edge.django_thread import in_django_thread
from fleet.edge.router import EdgeRouter
from fleet.edge.routes import register_host, register_http, register_websocket
from fleet.edge.wsgi import WsgiBridge, environ_of
from fleet.errors import TooManyStreams
from fleet.models import StreamLease
from tests.infra.asgi import edge_request, edge_socket


def test_the_router_answers_the_lifespan_protocol_and_closes_the_pools_at_shutdown(monkeypatch):
    closed, failed = [], []

    async def failing_hook():
        failed.append(True)
        raise RuntimeError("a hook that fails does not keep the others from running")

    async def pool_hook():
        closed.append(asyncio.get_running_loop())

    monkeypatch.setattr(routes, "_shutdown_hooks", [failing_hook, pool_hook])

    async def run():
        inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent = []

        async def receive():
            return inbox.pop(0)

        async def send(message):
            sent.append(message["type"])

        await EdgeRouter(http_app=None)({"type": "lifespan"}, receive, send)
        assert closed == [asyncio.get_running_loop()] and failed == [True]
        return sent

    assert asyncio.run(run()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_the_gateways_pool_is_registered_to_close_with_its_loop():
    assert close_pool in routes._shutdown_hooks

    async def run():
        first = _session()
        await close_pool()
        second = _session()  # a new one when the loop asks again
        await close_pool()
        return first.closed, second is not first and second.closed

    assert asyncio.run(run()) == (True, True)


def test_a_websocket_no_app_registered_is_refused_before_it_is_accepted():
    with edge_socket("/api/nowhere") as socket:
        assert not socket.accepted and socket.close_code == 1008


@pytest.fixture
def own_routes(monkeypatch):
    """The edge's route tables as they are, on copies this test may change."""
    monkeypatch.setattr(routes, "_hosts", list(routes._hosts))
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))
    monkeypatch.setattr(routes, "_http", list(routes._http))


def test_a_registered_host_takes_every_request_whatever_its_path(own_routes):
    seen = []

    async def host_app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    register_host(lambda host: host == "elsewhere.test", host_app)

    assert edge_request("GET", "/api/health", headers={"host": "elsewhere.test"}).status == 204
    assert seen == ["/api/health"]


@pytest.mark.django_db(transaction=True)
def test_a_registered_http_prefix_takes_its_path_and_what_lies_under_it_only(own_routes):
    seen = []

    async def prefix_app(scope, receive, send):
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    register_http("/things/v1/", prefix_app)

    assert edge_request("GET", "/things/v1").status == 204
    assert edge_request("POST", "/things/v1/a/b").status == 204
    assert edge_request("GET", "/things/v1x").status == 404  # a name that only starts the same: Django's
    assert seen == ["/things/v1", "/things/v1/a/b"]


def test_a_registered_websocket_handler_gets_its_path_arguments(own_routes):
    got = {}

    async def handler(scope, receive, send, *, name):
        got["name"] = name
        await receive()
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": f"hello {name}"})
        await send({"type": "websocket.close", "code": 1000})

    register_websocket(r"^/test/(?P<name>[a-z]+)$", handler)
    with edge_socket("/test/fleet") as socket:
        assert socket.accepted and socket.receive() == "hello fleet"
    assert got == {"name": "fleet"}


def test_the_environ_carries_what_django_reads():
    scope = {
        "type": "http", "method": "POST", "path": "/api/caf\u00e9", "raw_path": b"/api/caf%C3%A9",
        "query_string": b"a=1&b=2",
        "root_path": "", "scheme": "https", "http_version": "1.1", "client": ("10.0.0.7", 5555),
        "server": ("fleet.test", 443),
        "headers": [(b"host", b"fleet.test"), (b"cookie", b"a=1"), (b"cookie", b"b=2"), (b"accept", b"text/html"),
                    (b"accept", b"application/json"), (b"content-type", b"application/json")],
    }

    environ = environ_of(scope, body=None, size=17)

    assert environ["PATH_INFO"] == "/api/caf\u00c3\u00a9"  # PEP 3333: the UTF-8 bytes, as Latin-1
    assert environ["QUERY_STRING"] == "a=1&b=2" and environ["wsgi.url_scheme"] == "https"
    assert environ["HTTP_COOKIE"] == "a=1; b=2" and environ["HTTP_ACCEPT"] == "text/html,application/json"
    assert environ["CONTENT_TYPE"] == "application/json" and environ["CONTENT_LENGTH"] == "17"
    assert environ["REMOTE_ADDR"] == "10.0.0.7" and environ["fleet.edge"] is True


@pytest.mark.django_db(transaction=True)
def test_django_answers_through_the_edge_as_it_does_directly(client):
    direct = client.get("/api/auth/me")

    through = edge_request("GET", "/api/auth/me")

    assert through.status == direct.status_code == 401
    assert through.json() == direct.json()


def test_a_sync_streaming_body_is_read_chunk_by_chunk_in_the_django_thread():
    threads = []

    def application(environ, start_response):
        class Body:
            streaming = True

            def __iter__(self):
                for n in range(3):
                    threads.append(threading.current_thread().name)
                    yield f"chunk {n};".encode()

            def close(self):
                threads.append("closed in " + threading.current_thread().name)

        start_response("200 OK", [("Content-Type", "text/plain")])
        return Body()

    async def run():
        sent = []
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive():
            if messages:
                return messages.pop()
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": []}
        await WsgiBridge(application)(scope, receive, send)
        return sent

    sent = asyncio.run(run())

    assert b"".join(m.get("body", b"") for m in sent) == b"chunk 0;chunk 1;chunk 2;"
    assert set(threads) == {"fleet-django", "closed in fleet-django"}


# -- stream caps ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_users_streams_are_capped_across_processes_and_lapsed_ones_do_not_count(user):
    now = timezone.now()
    StreamLease.objects.create(user=user, kind="logs", holder="other:1:1", opened_at=now,
                               expires_at=now + timedelta(seconds=30))
    StreamLease.objects.create(user=user, kind="logs", holder="dead:1:1", opened_at=now - timedelta(minutes=5),
                               expires_at=now - timedelta(minutes=4))

    lease = streams.stream_open(user=user, kind="logs", per_user=2)
    with pytest.raises(TooManyStreams):
        streams.stream_open(user=user, kind="logs", per_user=2)
    other_kind = streams.stream_open(user=user, kind="terminal", per_user=1)

    lease.release()
    lease.release()  # once only
    streams.stream_open(user=user, kind="logs", per_user=2).release()
    other_kind.release()
    assert StreamLease.objects.filter(holder=streams.HOLDER).count() == 0


@pytest.mark.django_db
def test_a_process_holds_at_most_stream_limit_total(user, settings):
    settings.STREAM_LIMIT_TOTAL = 2
    held = [streams.stream_open(user=user, kind="logs", per_user=10) for _ in range(2)]
    try:
        with pytest.raises(TooManyStreams, match="server holds as many"):
            streams.stream_open(user=user, kind="logs", per_user=10)
    finally:
        for lease in held:
            lease.release()
    assert streams.held_count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_held_lease_is_renewed_until_released(user, monkeypatch):
    monkeypatch.setattr(streams, "RENEW_SECONDS", 0.05)

    async def hold():
        lease = await in_django_thread(streams.stream_open, user=user, kind="logs", per_user=1)
        first = await in_django_thread(lambda: StreamLease.objects.get(pk=lease.id).expires_at)
        async with lease:
            await asyncio.sleep(0.5)
            later = await in_django_thread(lambda: StreamLease.objects.get(pk=lease.id).expires_at)
        return first, later

    first, later = asyncio.run(hold())

    assert later > first
    assert not StreamLease.objects.exists()
