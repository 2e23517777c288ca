"""What the gateway proxy changes in a runtime UI's WebSocket frames, per family, so the
browser never holds a runtime secret (docs/edge.md, RUNTIMES.md section 6).

OpenClaw's Control UI speaks protocol 4 itself: the runtime opens with `connect.challenge`,
the UI answers `connect` with its own credentials and device signature. The relay keeps the
challenge, and rewrites the UI's `connect`: `auth` becomes the agent's token, `device` the
installation's identity signed over the same nonce, client id, mode, role and scopes. The
hello's device token (a credential of the installation's device) never reaches the browser.
Frames are otherwise passed as they are. A family whose UI needs nothing of this relays as is.
"""

from __future__ import annotations

import json

from .device import DeviceIdentity
from .endpoint import Endpoint


class UiRelay:
    """Pass-through: a frame in each direction as it came (None drops it)."""

    def to_runtime(self, frame: str | bytes) -> str | bytes | None:
        return frame

    def to_browser(self, frame: str | bytes) -> str | bytes | None:
        return frame


class OpenClawUiRelay(UiRelay):
    def __init__(self, endpoint: Endpoint, device: DeviceIdentity):
        self.endpoint = endpoint
        self.device = device
        self.challenge: tuple[str, int] | None = None
        self._connect_ids: set[str] = set()

    def to_browser(self, frame):
        message = _json(frame)
        if message is None:
            return frame
        if message.get("type") == "event" and message.get("event") == "connect.challenge":
            payload = message.get("payload") or {}
            if isinstance(payload.get("nonce"), str) and isinstance(payload.get("ts"), int):
                self.challenge = (payload["nonce"], payload["ts"])
            return frame
        if message.get("type") == "res" and message.get("id") in self._connect_ids:
            self._connect_ids.discard(message.get("id"))
            auth = (message.get("payload") or {}).get("auth")
            if isinstance(auth, dict) and "deviceToken" in auth:
                auth.pop("deviceToken")
                return json.dumps(message)
        return frame

    def to_runtime(self, frame):
        message = _json(frame)
        if message is None or message.get("type") != "req" or message.get("method") != "connect":
            return frame
        params = message.get("params")
        if not isinstance(params, dict) or self.challenge is None:
            return frame  # the runtime refuses it as it would anyway
        client = params.get("client") if isinstance(params.get("client"), dict) else {}
        scopes = [s for s in params.get("scopes") or [] if isinstance(s, str)]
        nonce, ts = self.challenge
        params["auth"] = {"token": self.endpoint.token}
        params["device"] = self.device.connect_device(
            client_id=str(client.get("id") or ""), client_mode=str(client.get("mode") or ""),
            role=str(params.get("role") or ""), scopes=scopes, token=self.endpoint.token, nonce=nonce,
            signed_at=ts, platform=str(client.get("platform") or ""),
            device_family=str(client.get("deviceFamily") or ""),
        )
        self._connect_ids.add(message.get("id"))
        return json.dumps(message)


def _json(frame) -> dict | None:
    if not isinstance(frame, str):
        return None
    try:
        message = json.loads(frame)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
