"""Which agent a proxy origin belongs to: `<agent-id>.<GATEWAY_PROXY_DOMAIN>` (the domain with
its port, as browsers send it in `Host`)."""

from __future__ import annotations

import uuid

from django.conf import settings


def proxy_domain() -> str:
    return (settings.GATEWAY_PROXY_DOMAIN or f"gw.localhost:{settings.FLEET_PORT}").lower()


def agent_id_of_host(host: str) -> uuid.UUID | None:
    """The agent id a Host header names under the proxy domain, or None (not a proxy origin)."""
    suffix = "." + proxy_domain()
    host = host.lower()
    if not host.endswith(suffix):
        return None
    label = host[: -len(suffix)]
    try:
        return uuid.UUID(label) if len(label) == 36 else None
    except ValueError:
        return None


def is_proxy_host(host: str) -> bool:
    return agent_id_of_host(host) is not None


def proxy_origin(agent_id, *, secure: bool) -> str:
    return f"{'https' if secure else 'http'}://{agent_id}.{proxy_domain()}"
