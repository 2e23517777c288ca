"""The OpenClaw client's protocol handling against a scripted loopback gateway: what a real
runtime does only under load or by accident (retryable refusals, silence, a restart close),
and what each call asks for (its scopes)."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from websockets.asyncio.server import serve

from agents.families import OPENCLAW
from agents.gateway import (
    Endpoint,
    GatewayAuthRefused,
    GatewayDropped,
    GatewayError,
    GatewayProtocolError,
    GatewayUnreachable,
)
from agents.gateway.device import DeviceIdentity, b64url_decode, signature_payload
from agents.gateway.openclaw import OpenClawGateway

TOKEN = secrets.token_urlsafe(32)
HELLO = {"type": "hello-ok", "protocol": 4, "server": {"version": "2026.9.6"}, "features": {}, "snapshot": {},
         "auth": {"role": "operator", "scopes": []}, "policy": {}}


DROP = object()


def refusal(code: str, message: str, **extra) -> dict:
    return {"ok": False, "error": {"code": code, "message": message, **extra}}


class ScriptedGateway:
    """Answers `connect` with `on_connect(n, params)` and requests with `on_request(method, params)`:
    each returns the frames to send (a dict is one `res`; None sends nothing), an int to close
    with that code, or DROP to break the TCP connection off without a close frame (1006)."""

    def __init__(self, on_connect=None, on_request=None, challenge=True):
        self.on_connect = on_connect or (lambda n, params: {"ok": True, "payload": HELLO})
        self.on_request = on_request or (lambda method, params: {"ok": True, "payload": {}})
        self.challenge = challenge
        self.connects: list[dict] = []
        self.requests: list[tuple[str, dict]] = []
        self.bad_signatures = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> ScriptedGateway:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(5)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _serve(self):
        return await serve(self._handle, "127.0.0.1", 0)

    def stop(self) -> None:
        self._server.close()
        asyncio.run_coroutine_threadsafe(self._server.wait_closed(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    async def _handle(self, ws) -> None:
        nonce, ts = secrets.token_hex(8), int(time.time() * 1000)
        await ws.send(json.dumps({"type": "event", "event": "connect.challenge", "payload": {"nonce": nonce, "ts": ts}}
                                 if self.challenge else {"type": "event", "event": "tick", "payload": {}}))
        frame = json.loads(await ws.recv())
        params = frame["params"]
        self.connects.append(params)
        self._check_signature(params, nonce, ts)
        if not await self._answer(ws, frame["id"], self.on_connect(len(self.connects), params)):
            return
        async for raw in ws:
            frame = json.loads(raw)
            self.requests.append((frame["method"], frame["params"]))
            await self._answer(ws, frame["id"], self.on_request(frame["method"], frame["params"]))

    async def _answer(self, ws, request_id, reply) -> bool:
        if reply is DROP:
            ws.transport.abort()
            return False
        if isinstance(reply, int):
            await ws.close(reply, "scripted close")
            return False
        for frame in reply if isinstance(reply, list) else [reply] if reply else []:
            await ws.send(json.dumps({"type": "res", "id": request_id, **frame}))
        return True

    def _check_signature(self, params: dict, nonce: str, ts: int) -> None:
        device = params["device"]
        payload = signature_payload(device_id=device["id"], client_id=params["client"]["id"],
                                    client_mode=params["client"]["mode"], role=params["role"], scopes=params["scopes"],
                                    signed_at=ts, token=params["auth"]["token"], nonce=nonce,
                                    platform=params["client"]["platform"])
        try:
            Ed25519PublicKey.from_public_bytes(b64url_decode(device["publicKey"])).verify(
                b64url_decode(device["signature"]), payload.encode())
        except Exception:
            self.bad_signatures += 1


@pytest.fixture
def scripted():
    started = []

    def start(**script) -> tuple[ScriptedGateway, OpenClawGateway]:
        server = ScriptedGateway(**script).start()
        started.append(server)
        endpoint = Endpoint(family=OPENCLAW, scheme="http", host="127.0.0.1", port=server.port, token=TOKEN,
                            agent_id="scripted")
        return server, OpenClawGateway(endpoint, DeviceIdentity.generate(), timeout=1.0)

    yield start
    for server in started:
        server.stop()


def test_the_connect_is_a_signed_backend_operator_with_the_least_scopes_per_call(scripted):
    server, gateway = scripted(
        on_request=lambda method, params: {"ok": True, "payload": {"hash": "h1", "sessions": []}}
    )

    gateway.handshake()
    gateway.config_get()
    gateway.config_patch({"a": 1}, base_hash="h0")
    gateway.abort_runs()

    first = server.connects[0]
    assert first["client"]["id"] == "gateway-client" and first["client"]["mode"] == "backend"
    assert (first["role"], first["minProtocol"], first["maxProtocol"], first["auth"]) == (
        "operator", 4, 4, {"token": TOKEN}
    )
    assert [c["scopes"] for c in server.connects] == [
        ["operator.read"], ["operator.read"], ["operator.admin"], ["operator.read", "operator.write"]]
    assert server.bad_signatures == 0
    assert ("config.patch", {"raw": '{"a": 1}', "baseHash": "h0"}) in server.requests


def test_replace_paths_are_sent_as_the_runtimes_replacepaths(scripted):
    server, gateway = scripted(on_request=lambda method, params: {"ok": True, "payload": {"hash": "h1"}})

    gateway.config_patch({"mcp": {"servers": {"x": None}}}, base_hash="h0", replace_paths=["mcp.servers.x.args"])

    assert ("config.patch", {"raw": '{"mcp": {"servers": {"x": null}}}', "baseHash": "h0",
                             "replacePaths": ["mcp.servers.x.args"]}) in server.requests


def test_a_retryable_refusal_of_the_connect_is_retried_with_backoff(scripted):
    busy = refusal("UNAVAILABLE", "starting", retryable=True, retryAfterMs=20)
    server, gateway = scripted(on_connect=lambda n, params: busy if n < 3 else {"ok": True, "payload": HELLO})

    assert gateway.handshake().version == "2026.9.6"

    assert len(server.connects) == 3


def test_a_refused_token_is_never_retried(scripted):
    mismatch = refusal("INVALID_REQUEST", f"unauthorized: token {TOKEN} mismatch",
                       details={"code": "AUTH_TOKEN_MISMATCH"})
    server, gateway = scripted(on_connect=lambda n, params: mismatch)

    with pytest.raises(GatewayAuthRefused) as refused:
        gateway.channels_status()

    assert len(server.connects) == 1
    assert TOKEN not in str(refused.value) and "[redacted]" in str(refused.value)


def test_a_protocol_mismatch_is_never_retried(scripted):
    mismatch = refusal("INVALID_REQUEST", "protocol mismatch", details={"code": "PROTOCOL_MISMATCH"})
    server, gateway = scripted(on_connect=lambda n, params: mismatch)

    with pytest.raises(GatewayProtocolError):
        gateway.handshake()
    assert len(server.connects) == 1


def test_a_retryable_refusal_of_a_call_is_retried_and_others_are_not(scripted):
    answers = iter([refusal("UNAVAILABLE", "queue full", retryable=True, retryAfterMs=10),
                    {"ok": True, "payload": {"channels": {"telegram": {"configured": True, "running": True}}}}])
    server, gateway = scripted(on_request=lambda method, params: next(answers))

    (telegram,) = gateway.channels_status()
    assert (telegram.channel, telegram.configured, telegram.connected) == ("telegram", True, False)
    assert len(server.requests) == 2

    server.requests.clear()
    server.on_request = lambda method, params: refusal("INVALID_REQUEST", "invalid channels.logout channel")
    with pytest.raises(GatewayError):
        gateway.logout("nope")
    assert len(server.requests) == 1


def test_a_call_without_an_answer_times_out(scripted):
    server, gateway = scripted(on_request=lambda method, params: None)

    started = time.monotonic()
    with pytest.raises(GatewayUnreachable, match="did not answer config.get within 1 s"):
        gateway.config_get()

    assert time.monotonic() - started < 3
    assert len(server.requests) == 1  # a timeout is not a retryable refusal


def test_a_restart_close_is_retried_on_a_new_connection(scripted):
    server, gateway = scripted(on_connect=lambda n, params: 1012 if n == 1 else {"ok": True, "payload": HELLO})

    assert gateway.handshake().protocol == 4
    assert len(server.connects) == 2


def test_a_config_write_lost_to_a_dropped_connection_is_sent_again(scripted):
    drops = iter([True])

    def on_request(method, params):
        if method == "config.get":
            return {"ok": True, "payload": {"hash": "h1"}}
        if next(drops, False):
            return DROP  # the runtime went away mid-write (OpenClaw restarting itself)
        return {"ok": True, "payload": {"hash": "h2", "changedPaths": ["update.channel"]}}

    server, gateway = scripted(on_request=on_request)

    assert gateway.config_patch({"update": {"channel": "beta"}})["changed_paths"] == ["update.channel"]
    assert [method for method, _ in server.requests] == ["config.get", "config.patch"] * 2
    assert len(server.connects) == 2


def test_a_dropped_connection_ends_other_calls_at_once_and_config_calls_at_the_budget(scripted):
    server, gateway = scripted(on_request=lambda method, params: DROP)

    with pytest.raises(GatewayDropped):
        gateway.logout("telegram")  # not idempotent: never sent twice
    assert len(server.requests) == 1

    server.requests.clear()
    started = time.monotonic()
    with pytest.raises(GatewayDropped, match="closed the connection"):
        gateway.config_get()
    assert len(server.requests) > 1  # tried again while the 1 s budget lasted, and no longer
    assert time.monotonic() - started < 3


def test_a_gateway_that_does_not_open_with_a_challenge_is_not_openclaw(scripted):
    server, gateway = scripted(challenge=False)

    with pytest.raises(GatewayProtocolError, match="connect challenge"):
        gateway.handshake()


def test_a_run_answers_accepted_first_and_its_result_later_under_the_same_id(scripted):
    final = {"ok": True, "payload": {"status": "ok", "sessionKey": "agent:main:fleet:c1", "result": {
        "payloads": [{"text": "done"}], "meta": {"agentMeta": {"usage": {"input": 5, "output": 2}}}}}}
    accepted = {"ok": True, "payload": {"status": "accepted", "runId": "r1"}}
    server, gateway = scripted(on_request=lambda method, params: [accepted, final])

    reply = gateway.send_message("hi", conversation="c1")

    assert (reply.text, reply.conversation, reply.input_tokens, reply.output_tokens) == (
        "done", "agent:main:fleet:c1", 5, 2
    )
    ((method, params),) = server.requests
    assert (method, params["sessionKey"], params["message"]) == ("agent", "fleet:c1", "hi")
    assert server.connects[0]["scopes"] == ["operator.write", "operator.approvals"]


@pytest.mark.django_db(transaction=True)  # the key is created by a worker thread's own connection
def test_a_connection_made_and_opened_in_async_code_reads_the_device_key_off_the_loop(scripted):
    from agents.gateway.protocol import READ
    from agents.models import GatewayDevice

    server, scripted_gateway = scripted()
    gateway = OpenClawGateway(scripted_gateway.endpoint)  # the installation's key, not read yet

    async def listen_once():  # what a listener does: everything on its event loop
        async with gateway.connection([READ]) as connection:
            return connection.hello

    assert asyncio.run(listen_once())["protocol"] == 4
    assert server.connects[0]["device"]["id"] == GatewayDevice.objects.get().device_id
    assert server.bad_signatures == 0


def test_a_close_cancelled_midway_still_ends_the_reader(scripted):
    # A chat stream whose client leaves cancels the turn while it closes its connection; a reader
    # left pending would die with the event loop in the middle of a recv.
    from agents.gateway.protocol import READ

    server, gateway = scripted()

    async def close_cancelled_midway():
        connection = gateway.connection([READ])
        await connection.open()
        closing = asyncio.create_task(connection.close())
        await asyncio.sleep(0)  # the close frame is on its way
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        return connection.closed

    assert asyncio.run(close_cancelled_midway())
