"""HTTP to a gateway: one request, its failures as gateway errors, its JSON body.

Adopted endpoints go through fleet.netsafety's safe session (address checked at connect time,
at most 3 redirects, each checked); provisioned ones through a plain session that ignores
proxies. Redirects are never followed for provisioned endpoints: a runtime has no reason to send
the control plane elsewhere.
"""

from __future__ import annotations

import json
import logging

import requests

from fleet import netsafety

from .endpoint import Endpoint
from .errors import (
    GatewayAuthRefused,
    GatewayError,
    GatewayProtocolError,
    GatewayUnreachable,
    runtime_code,
    runtime_text,
    scrub,
)

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0


def request(endpoint: Endpoint, method: str, route: str, *, json_body=None, headers: dict | None = None,
            authenticated: bool = True, timeout: float = DEFAULT_TIMEOUT, ok_statuses: tuple[int, ...] = (),
            json_required: bool = True) -> tuple[int, dict, requests.structures.CaseInsensitiveDict]:
    """(status, JSON body, headers) of a 2xx (or an `ok_statuses`) answer; gateway errors otherwise.
    Without `json_required`, a body that is not JSON comes back as {"text": ...}."""
    sent = dict(headers or {})
    if authenticated:
        sent["Authorization"] = f"Bearer {endpoint.token}"
    secrets = (endpoint.token,)
    try:
        with endpoint.http_session() as session:
            response = session.request(method, endpoint.http_url(route), json=json_body, headers=sent,
                                        timeout=timeout, allow_redirects=endpoint.external)
            status, text, answer_headers = response.status_code, response.text, response.headers
    except netsafety.UnsafeTarget as exc:
        raise GatewayUnreachable(f"The agent's gateway address is not allowed: {exc}") from None
    except requests.Timeout:
        raise GatewayUnreachable(f"The agent's gateway did not answer {method} {route} within {timeout:g} s.") from None
    except requests.RequestException as exc:
        logger.debug("Gateway %s %s of agent %s failed: %s", method, route, endpoint.agent_id, scrub(exc, secrets))
        raise GatewayUnreachable(f"The agent's gateway could not be reached ({type(exc).__name__}).") from None
    body = answer_body(endpoint, method, route, status, text, ok_statuses=ok_statuses, json_required=json_required)
    return status, body, answer_headers


def answer_body(endpoint: Endpoint, method: str, route: str, status: int, text: str, *,
                ok_statuses: tuple[int, ...] = (), json_required: bool = True) -> dict:
    """The JSON body of a 2xx (or an `ok_statuses`) answer; gateway errors otherwise (shared
    with the answers read on the event loop, agents.gateway.readiness_async)."""
    body = _json_of(text, status)
    if 200 <= status < 300 or status in ok_statuses:
        if body is None and not json_required:
            return {"text": text[:500]}
        if body is None:
            raise GatewayProtocolError(
                f"The agent's gateway answered {method} {route} with something that is not JSON.", status=status
            )
        return body
    raise refusal(status, body, text, (endpoint.token,), what=f"{method} {route}")


def _json_of(text: str, status: int):
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return None


def refusal(status: int, body, text: str, secrets, *, what: str) -> GatewayError:
    """The error for a non-2xx answer, with the runtime's own message in its short, scrubbed
    form (errors.runtime_text); a body that is not the runtime's JSON error gives none."""
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        message, code = runtime_text(detail.get("message"), secrets), runtime_code(detail.get("code"))
    else:
        message, code = runtime_text(detail, secrets), ""
    message = message or f"HTTP {status}"
    if status in (401, 403):
        return GatewayAuthRefused(f"The runtime refused the agent's token: {message}", runtime_code=code, status=status)
    return GatewayError(f"The runtime refused {what} (HTTP {status}): {message}", runtime_code=code,
                        retryable=status == 503, status=status)
