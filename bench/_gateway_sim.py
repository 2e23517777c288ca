"""A loopback OpenClaw gateway (protocol 4) for the gateway benches, in processes of its own (so
their CPU and memory are not counted with the client's). Scale benches only; tests use the real
runtime.

Each process listens on one port of 127.0.0.1 and speaks OpenClaw's handshake: it sends
`connect.challenge`, checks the connect request as OpenClaw does (client id and mode, protocol
range, token, the device id as SHA-256 of the public key, the Ed25519 signature of the v3 payload
over the challenge nonce and ts), answers hello-ok, and answers every request at once. With
`tick_seconds` it sends each held connection a `tick` event that often, as OpenClaw does every
30 s. It counts refused handshakes and the connections it holds past hello-ok (shared counters
the bench reads while it runs), so a figure never hides a client that fails.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import multiprocessing
import resource
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

HOST = "127.0.0.1"  # never anything else


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def refusal_of(params: dict, nonce: str, ts: int, token: str) -> str | None:
    """Why OpenClaw would refuse this connect, or None. Written from RUNTIMES.md, not from the client."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    client, device = params.get("client") or {}, params.get("device") or {}
    if client.get("id") != "gateway-client" or client.get("mode") != "backend":
        return "SCHEMA"
    if not params.get("minProtocol", 0) <= 4 <= params.get("maxProtocol", 0):
        return "PROTOCOL_MISMATCH"
    if (params.get("auth") or {}).get("token") != token:
        return "AUTH_TOKEN_MISMATCH"
    public = _b64url_decode(device.get("publicKey", ""))
    if device.get("id") != hashlib.sha256(public).hexdigest():
        return "DEVICE_AUTH_DEVICE_ID_MISMATCH"
    if device.get("nonce") != nonce or device.get("signedAt") != ts:
        return "DEVICE_AUTH_NONCE_MISMATCH"
    signed = "|".join(["v3", device["id"], client["id"], client["mode"], params.get("role", ""),
                       ",".join(params.get("scopes") or []), str(ts), token, nonce,
                       client.get("platform", "").strip().lower(), (client.get("deviceFamily") or "").strip().lower()])
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(_b64url_decode(device.get("signature", "")), signed.encode())
    except Exception:
        return "DEVICE_AUTH_SIGNATURE_INVALID"
    return None


def _serve(token, tick_seconds, port_pipe, stop_event, held, refused) -> None:
    import uvloop
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    # As many sockets as the machine allows: a scale bench holds thousands.
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)

    async def ticks(ws):
        seq = 0
        while True:
            await asyncio.sleep(tick_seconds)
            seq += 1
            await ws.send(json.dumps({"type": "event", "event": "tick", "payload": {"ts": int(time.time() * 1000)},
                                      "seq": seq}))

    async def handle(ws):
        try:
            await converse(ws)
        except ConnectionClosed:
            pass  # a listener shard killed, or a client that gave up: what the benches do on purpose

    async def converse(ws):
        nonce, ts = secrets.token_hex(16), int(time.time() * 1000)
        await ws.send(
            json.dumps({"type": "event", "event": "connect.challenge", "payload": {"nonce": nonce, "ts": ts}})
        )
        frame = json.loads(await ws.recv())
        why = refusal_of(frame.get("params") or {}, nonce, ts, token)
        if why:
            with refused.get_lock():
                refused.value += 1
            await ws.send(json.dumps({"type": "res", "id": frame["id"], "ok": False,
                                      "error": {"code": "INVALID_REQUEST", "message": why, "details": {"code": why}}}))
            await ws.close(1008, why)
            return
        hello = {"type": "hello-ok", "protocol": 4, "server": {"version": "bench"}, "features": {}, "snapshot": {},
                 "auth": {"role": "operator", "scopes": frame["params"].get("scopes")},
                 "policy": {"tickIntervalMs": int((tick_seconds or 30) * 1000)}}
        await ws.send(json.dumps({"type": "res", "id": frame["id"], "ok": True, "payload": hello}))
        with held.get_lock():
            held.value += 1
        ticking = asyncio.create_task(ticks(ws)) if tick_seconds else None
        try:
            async for raw in ws:  # a client killed mid-connection ends it with ConnectionClosedError
                request = json.loads(raw)
                payload = {"channels.status": {"channels": {}, "refused": refused.value},
                           "config.get": {"config": {}, "hash": "bench"}}.get(request["method"], {})
                await ws.send(json.dumps({"type": "res", "id": request["id"], "ok": True, "payload": payload}))
        finally:
            if ticking is not None:
                ticking.cancel()
            with held.get_lock():
                held.value -= 1

    async def main():
        async with serve(handle, HOST, 0, compression=None, max_queue=4, ping_interval=None,
                         backlog=4096) as server:
            port_pipe.send(server.sockets[0].getsockname()[1])
            while not stop_event.is_set():
                await asyncio.sleep(0.1)

    uvloop.run(main())


@dataclass(frozen=True)
class LoopbackGateways:
    """The running servers: their ports, and what they count."""

    ports: list[int]
    _held: list
    _refused: list

    @property
    def held(self) -> int:
        """Connections past hello-ok, open now, over all the servers."""
        return sum(counter.value for counter in self._held)

    @property
    def refused(self) -> int:
        return sum(counter.value for counter in self._refused)


@contextmanager
def loopback_gateways(token: str, *, processes: int = 1, tick_seconds: float = 0) -> Iterator[LoopbackGateways]:
    """`processes` loopback protocol-4 servers, one port each, for the block."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    servers, ports, held, refused = [], [], [], []
    try:
        for _ in range(processes):
            receive, send = context.Pipe(duplex=False)
            held.append(context.Value("i", 0))
            refused.append(context.Value("i", 0))
            server = context.Process(target=_serve, args=(token, tick_seconds, send, stop, held[-1], refused[-1]),
                                     daemon=True)
            server.start()
            servers.append(server)
            if not receive.poll(30):
                raise RuntimeError("the bench gateway did not start")
            ports.append(receive.recv())
        yield LoopbackGateways(ports, held, refused)
    finally:
        stop.set()
        for server in servers:
            server.join(timeout=10)
            if server.is_alive():
                server.kill()
