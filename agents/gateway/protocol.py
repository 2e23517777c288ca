"""OpenClaw's gateway protocol 4: constants, the connect request, and its error frames as errors.

Frames (RUNTIMES.md section 1): requests {type:"req", id, method, params}, responses
{type:"res", id, ok, payload | error:{code, message, details?, retryable?, retryAfterMs?}},
events {type:"event", event, payload, seq?}.
"""

from __future__ import annotations

import sys

from .device import DeviceIdentity
from .errors import GatewayAuthRefused, GatewayError, GatewayProtocolError, runtime_code, runtime_text

PROTOCOL = 4
CLIENT_ID = "gateway-client"  # one of OpenClaw's fixed client ids; a backend uses this one
CLIENT_MODE = "backend"
ROLE = "operator"
CLIENT_VERSION = "fleet-0.1.0"
PLATFORM = sys.platform

READ = "operator.read"
WRITE = "operator.write"
ADMIN = "operator.admin"
APPROVALS = "operator.approvals"
PAIRING = "operator.pairing"
OPERATOR_SCOPES = frozenset({READ, WRITE, ADMIN, APPROVALS, PAIRING})

# Capabilities a client declares in connect. Exec approvals are routed only to an operator.admin
# client that declares both (RUNTIMES.md section 1, "Policy and approvals").
CAP_APPROVALS = "approvals"
CAP_EXEC_APPROVALS = "exec-approvals"
APPROVAL_CAPS = (CAP_APPROVALS, CAP_EXEC_APPROVALS)

# Connect refusals that mean "this credential is not accepted": the agent's token is wrong,
# missing or no longer covers what we ask. An operator must act; retrying cannot help.
AUTH_DETAIL_CODES = frozenset({
    "AUTH_TOKEN_MISMATCH", "AUTH_TOKEN_MISSING", "AUTH_PASSWORD_MISMATCH", "AUTH_PASSWORD_MISSING",
    "AUTH_SCOPE_MISMATCH", "AUTH_UNAUTHORIZED", "PAIRING_REQUIRED",
})
PROTOCOL_DETAIL_CODES = frozenset({"PROTOCOL_MISMATCH"})
# Close codes after which a new connection may succeed: restarting (1012), try again later (1013).
RETRYABLE_CLOSE_CODES = frozenset({1012, 1013})


def connect_params(*, token: str, scopes: list[str], caps: list[str], nonce: str, ts: int,
                   device: DeviceIdentity | None) -> dict:
    params = {
        "minProtocol": PROTOCOL,
        "maxProtocol": PROTOCOL,
        "client": {"id": CLIENT_ID, "version": CLIENT_VERSION, "platform": PLATFORM, "mode": CLIENT_MODE},
        "role": ROLE,
        "scopes": list(scopes),
        "caps": list(caps),
        "auth": {"token": token},
    }
    if device is not None:
        params["device"] = device.connect_device(
            client_id=CLIENT_ID, client_mode=CLIENT_MODE, role=ROLE, scopes=list(scopes), token=token,
            nonce=nonce, signed_at=ts, platform=PLATFORM,
        )
    return params


def challenge_of(frame) -> tuple[str, int]:
    """(nonce, ts) of a connect.challenge event; GatewayProtocolError for anything else."""
    if not (isinstance(frame, dict) and frame.get("type") == "event" and frame.get("event") == "connect.challenge"):
        raise GatewayProtocolError("The gateway did not open with a connect challenge; is it an OpenClaw gateway?")
    payload = frame.get("payload") or {}
    nonce, ts = payload.get("nonce"), payload.get("ts")
    if not isinstance(nonce, str) or not nonce or not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
        raise GatewayProtocolError("The gateway's connect challenge is malformed.")
    return nonce, ts


def error_from_frame(error, *, method: str, secrets=()) -> GatewayError:
    """The exception for a response's `error` object (its message scrubbed of secrets)."""
    error = error if isinstance(error, dict) else {}
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    code = runtime_code(error.get("code"))
    detail_code = runtime_code(details.get("code") or details.get("reason"))
    message = runtime_text(error.get("message"), secrets) or code or "no reason given"
    retry_after_ms = error.get("retryAfterMs")
    options = {
        "runtime_code": code,
        "detail_code": detail_code,
        "retryable": bool(error.get("retryable")) or code == "UNAVAILABLE",
        "retry_after": retry_after_ms / 1000 if isinstance(retry_after_ms, (int, float)) else None,
    }
    if method == "connect" and (detail_code in AUTH_DETAIL_CODES or detail_code.startswith("AUTH_")):
        options["retryable"] = False
        return GatewayAuthRefused(f"The runtime refused the agent's token: {message}", **options)
    if detail_code in PROTOCOL_DETAIL_CODES or detail_code.startswith("DEVICE_AUTH_"):
        options["retryable"] = False
        return GatewayProtocolError(f"The runtime refused the connection: {message}", **options)
    return GatewayError(f"The runtime refused {method}: {message}", **options)
