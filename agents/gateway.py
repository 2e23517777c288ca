"""The one client for talking to a running runtime's gateway.

Provisioned agents are reached where their backend says (`gateway_endpoint`); adopted ones at
the URL they were registered with, always through fleet.netsafety's safe session (the address
is checked again at connect time) and only while their stored token passes the strength rule
(weak stored tokens fail closed until rotated).
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import requests
from django.conf import settings

from .backends.base import BackendError
from .models import Agent
from .tokens import weak_token_reason

logger = logging.getLogger(__name__)

HEALTH_TIMEOUT_SECONDS = 2.5


class GatewayUnavailable(Exception):
    """The agent's gateway cannot be addressed (no endpoint, weak adopted token...)."""


def gateway_base_url(agent: Agent) -> str:
    """Where the control plane reaches the agent's gateway, without a trailing slash."""
    if agent.is_external:
        if weak_token_reason(agent.gateway_token if isinstance(agent.gateway_token, str) else None):
            raise GatewayUnavailable("The adopted agent's stored token is weak or unreadable; rotate it.")
        return agent.gateway_url.rstrip("/")
    from .backends.registry import UnknownTarget, backend_for

    try:
        host, port = backend_for(agent).gateway_endpoint(agent)
    except (BackendError, UnknownTarget) as exc:
        raise GatewayUnavailable(str(exc)) from exc
    shown_host = f"[{host}]" if ":" in host else host
    return f"http://{shown_host}:{port}"


def _session_for(agent: Agent):
    if agent.is_external:
        from fleet.netsafety import safe_session

        return safe_session(allow_private=settings.PLATFORM_MODE != "paas")
    return requests.Session()


def gateway_get(agent: Agent, path: str, *, timeout: float = HEALTH_TIMEOUT_SECONDS) -> requests.Response:
    """GET `path` on the agent's gateway (GatewayUnavailable or requests' errors on failure)."""
    url = gateway_base_url(agent) + path
    with _session_for(agent) as session:
        return session.get(url, timeout=timeout, allow_redirects=False)


def gateway_health(agent: Agent) -> bool:
    """Whether the gateway answers GET /health with a 2xx within a few seconds."""
    try:
        return gateway_get(agent, "/health").ok
    except Exception as exc:  # any failure to answer is "unhealthy", never an error of the caller
        logger.debug("Gateway health of agent %s failed: %s", agent.pk, exc)
        return False


def gateway_public_host(fallback: str) -> str:
    """The host browsers use for gateway UIs: the public URL's host when one is configured."""
    public = settings.NORA_PUBLIC_URL or settings.NEXTAUTH_URL
    return (urlsplit(public).hostname if public else None) or fallback
