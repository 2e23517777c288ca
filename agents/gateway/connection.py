"""One authenticated WebSocket to an OpenClaw gateway, usable for one call or held open.

    connection = OpenClawConnection(endpoint, device, scopes=[READ])
    async with connection:                      # challenge, signed connect, hello-ok
        payload = await connection.call("health")

A reader task owns the socket's incoming side: responses resolve the pending call with the same
id (an `agent` run answers "accepted" first, then its final result under the same id), events
go to `on_event`. A long-lived listener holds the connection, receives events, and learns that
it ended from `wait_closed()`. Every wait is bounded: the open, each call, the close.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from . import protocol
from .device import DeviceIdentity
from .endpoint import Endpoint
from .errors import GatewayDropped, GatewayProtocolError, runtime_text, scrub

logger = logging.getLogger(__name__)

OPEN_TIMEOUT = 10.0
CALL_TIMEOUT = 10.0
CLOSE_TIMEOUT = 2.0
MAX_FRAME_BYTES = 32 * 1024 * 1024  # above OpenClaw's 25 MiB maxPayload, so its largest frame fits

EventHandler = Callable[[dict], Awaitable[None] | None]


class OpenClawConnection:
    def __init__(self, endpoint: Endpoint, device: DeviceIdentity | Callable[[], DeviceIdentity] | None, *,
                 scopes: list[str],
                 caps: list[str] = (), on_event: EventHandler | None = None,
                 open_timeout: float = OPEN_TIMEOUT, call_timeout: float = CALL_TIMEOUT):
        self.endpoint = endpoint
        self.device = device
        self.scopes = list(scopes)
        self.caps = list(caps)
        self.on_event = on_event
        self.open_timeout = open_timeout
        self.call_timeout = call_timeout
        self.hello: dict | None = None
        self.close_code: int | None = None
        self.close_reason = ""
        self._ws = None
        self._pending: dict[str, tuple[asyncio.Future, bool]] = {}
        self._reader: asyncio.Task | None = None

    # -- opening -----------------------------------------------------------------------------
    async def open(self) -> dict:
        """Connect, answer the challenge, and return the hello-ok payload."""
        if callable(self.device):  # a loader that reads the database: not on the event loop's thread
            self.device = await asyncio.to_thread(self.device)
        addresses = await asyncio.to_thread(self.endpoint.dial_addresses)  # DNS + netsafety: blocking
        try:
            async with asyncio.timeout(self.open_timeout):
                self._ws = await self._dial(addresses)
                self.hello = await self._handshake()
        except TimeoutError:
            await self._abandon()
            raise GatewayDropped(
                f"The agent's gateway did not complete the handshake within {self.open_timeout:g} s."
            ) from None
        except ConnectionClosed as exc:
            await self._abandon()
            raise self._closed_error(exc.rcvd.code if exc.rcvd else None, exc.rcvd.reason if exc.rcvd else "") from None
        except BaseException:
            await self._abandon()
            raise
        self._reader = asyncio.create_task(self._read_frames(), name=f"openclaw-reader-{self.endpoint.agent_id}")
        return self.hello

    async def _dial(self, addresses: list[str]):
        last: Exception | None = None
        for address in addresses:  # the pinned, checked addresses, in resolver order
            try:
                return await websockets.connect(
                    self.endpoint.ws_url, host=address, port=self.endpoint.port,
                    proxy=None,  # a proxy would connect on our behalf, past the address check
                    compression=None,  # OpenClaw does not negotiate permessage-deflate
                    max_size=MAX_FRAME_BYTES, open_timeout=None, close_timeout=CLOSE_TIMEOUT,
                    user_agent_header=f"fleet-gateway/{protocol.CLIENT_VERSION}",
                )
            except InvalidStatus as exc:
                status = exc.response.status_code
                # 503: starting or draining; another attempt may succeed.
                error = GatewayDropped(f"The agent's gateway refused the WebSocket upgrade (HTTP {status}).")
                error.retryable = status == 503
                raise error from None
            except InvalidHandshake as exc:
                raise GatewayProtocolError(f"The agent's gateway does not speak WebSocket here: {exc}") from None
            except OSError as exc:
                last = exc
        logger.debug("Dialling the gateway of agent %s failed: %s", self.endpoint.agent_id, last)
        raise GatewayDropped(f"The agent's gateway could not be reached ({type(last).__name__}).")

    async def _handshake(self) -> dict:
        nonce, ts = protocol.challenge_of(self._decode(await self._ws.recv()))
        request_id = uuid.uuid4().hex
        params = protocol.connect_params(token=self.endpoint.token, scopes=self.scopes, caps=self.caps,
                                         nonce=nonce, ts=ts, device=self.device)
        await self._ws.send(json.dumps({"type": "req", "id": request_id, "method": "connect", "params": params}))
        while True:
            frame = self._decode(await self._ws.recv())
            if frame.get("type") == "res" and frame.get("id") == request_id:
                break
        if not frame.get("ok"):
            raise protocol.error_from_frame(frame.get("error"), method="connect", secrets=self._secrets)
        hello = frame.get("payload") or {}
        if hello.get("type") != "hello-ok" or hello.get("protocol") != protocol.PROTOCOL:
            raise GatewayProtocolError(
                f"The gateway answered connect with protocol {hello.get('protocol')!r}, not {protocol.PROTOCOL}."
            )
        return hello

    # -- calling -----------------------------------------------------------------------------
    async def call(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                   expect_final: bool = False):
        """The payload of `method`'s response; GatewayError when the runtime refuses it."""
        if self._ws is None or self.closed:
            raise self._closed_error(self.close_code, self.close_reason)
        request_id = uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (future, expect_final)
        limit = self.call_timeout if timeout is None else timeout
        try:
            await self._ws.send(json.dumps({"type": "req", "id": request_id, "method": method, "params": params or {}}))
            async with asyncio.timeout(limit):
                frame = await future
        except TimeoutError:
            raise GatewayDropped(f"The agent's gateway did not answer {method} within {limit:g} s.") from None
        except ConnectionClosed as exc:
            raise self._closed_error(exc.rcvd.code if exc.rcvd else None, exc.rcvd.reason if exc.rcvd else "") from None
        finally:
            self._pending.pop(request_id, None)
        if not frame.get("ok"):
            raise protocol.error_from_frame(frame.get("error"), method=method, secrets=self._secrets)
        return frame.get("payload")

    # -- the reader --------------------------------------------------------------------------
    async def _read_frames(self) -> None:
        try:
            async for raw in self._ws:
                frame = self._decode(raw)
                kind = frame.get("type")
                if kind == "res":
                    self._resolve(frame)
                elif kind == "event" and self.on_event is not None:
                    await self._deliver(frame)
        except ConnectionClosed:
            pass
        except GatewayProtocolError as exc:
            logger.warning("Agent %s's gateway sent a malformed frame; closing: %s", self.endpoint.agent_id, exc)
            await self._ws.close(1002, "malformed frame")
        finally:
            self.close_code = self._ws.close_code
            self.close_reason = scrub(self._ws.close_reason or "", self._secrets)
            error = self._closed_error(self.close_code, self.close_reason)
            for future, _ in self._pending.values():
                if not future.done():
                    future.set_exception(error)

    def _resolve(self, frame: dict) -> None:
        entry = self._pending.get(frame.get("id"))
        if entry is None:
            return  # a late answer to a call that timed out
        future, expect_final = entry
        if expect_final and frame.get("ok") and (frame.get("payload") or {}).get("status") == "accepted":
            return  # a run's acknowledgement; its result follows under the same id
        if not future.done():
            future.set_result(frame)

    async def _deliver(self, frame: dict) -> None:
        try:
            result = self.on_event(frame)
            if asyncio.iscoroutine(result):
                await result
        except Exception:  # a consumer's bug must not kill the connection
            logger.exception("The event handler failed on %s from agent %s", frame.get("event"), self.endpoint.agent_id)

    # -- closing -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._reader is not None and self._reader.done()

    async def wait_closed(self) -> None:
        if self._reader is not None:
            await asyncio.shield(self._reader)

    async def close(self) -> None:
        try:
            if self._ws is not None:
                await self._ws.close()
        finally:  # a close that is itself cancelled (the caller left) still ends the reader
            await self._end_reader()
        if self._reader is not None and self._reader.done() and not self._reader.cancelled():
            self._reader.result()  # the reader's unexpected error, if it had one, surfaces here

    async def _end_reader(self) -> None:
        """Let the reader see the socket close; cancel it if it has not within CLOSE_TIMEOUT, and
        wait for the cancellation to land. A reader left pending dies with its event loop in the
        middle of Connection.recv ("Exception ignored in <coroutine object Connection.recv>")."""
        if self._reader is None:
            return
        await asyncio.wait({self._reader}, timeout=CLOSE_TIMEOUT)  # never cancels it
        if not self._reader.done():
            self._reader.cancel()
            await asyncio.wait({self._reader}, timeout=CLOSE_TIMEOUT)

    async def _abandon(self) -> None:
        if self._ws is not None:
            self._ws.transport.abort()  # a failed open: no close handshake to wait for

    async def __aenter__(self) -> OpenClawConnection:
        await self.open()
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    # -- helpers -----------------------------------------------------------------------------
    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self.endpoint.token,)

    @staticmethod
    def _decode(raw) -> dict:
        try:
            frame = json.loads(raw)
        except (TypeError, ValueError):
            raise GatewayProtocolError("The gateway sent a frame that is not JSON.") from None
        if not isinstance(frame, dict):
            raise GatewayProtocolError("The gateway sent a frame that is not a JSON object.")
        return frame

    def _closed_error(self, code: int | None, reason: str) -> GatewayDropped:
        shown = f" ({code}: {runtime_text(reason, self._secrets)})" if code else ""
        error = GatewayDropped(f"The agent's gateway closed the connection{shown}.")
        error.retryable = code in protocol.RETRYABLE_CLOSE_CODES
        return error
