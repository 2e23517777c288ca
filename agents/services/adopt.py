"""Adopt: register an already-running external runtime, without provisioning compute."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from fleet import netsafety
from fleet.api.principal import Principal
from fleet.errors import ValidationFailed
from fleet.task_queue import task_named

from ..backends.base import GATEWAY_PORT
from ..events import agent_event
from ..gateway.tokens import weak_token_reason
from ..models import Agent, DeployTarget, RuntimeFamily, Status
from .billing import agent_quota_check
from .deploy import key_workspace_assign
from .handshake import FIRST_HANDSHAKE_TASK
from .selection import clean_name

EXTERNAL = DeployTarget.EXTERNAL
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*\.?$")


@dataclass(frozen=True)
class AdoptRequest:
    gateway_token: str
    name: str | None = None
    runtime_family: str | None = None
    url: str | None = None
    host: str | None = None
    port: int | None = None


@dataclass(frozen=True)
class Endpoint:
    url: str  # normalised, no trailing slash
    host: str
    port: int


def _allow_private() -> bool:
    """paas: public endpoints only; self-hosted also private networks (never link-local/metadata)."""
    return settings.PLATFORM_MODE != "paas"


def _check_port(port: int, field: str) -> None:
    if not netsafety.port_allowed(port):
        raise ValidationFailed({field: f"Port {port} is not an allowed gateway port."})


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return bool(_HOSTNAME.match(host))


def _endpoint_from_url(raw: str) -> Endpoint:
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        raise ValidationFailed({"url": "Enter a valid http(s) URL with an allowed port."}) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not _valid_host(parts.hostname):
        raise ValidationFailed({"url": "Enter a valid http(s) URL."})
    if parts.username or parts.password:
        raise ValidationFailed({"url": "The URL must not carry credentials; send the token as gateway_token."})
    port = port or (443 if parts.scheme == "https" else 80)
    _check_port(port, "url")
    host = parts.hostname
    shown_host = f"[{host}]" if ":" in host else host
    path = parts.path.rstrip("/")
    return Endpoint(url=f"{parts.scheme}://{shown_host}:{port}{path}", host=host, port=port)


def _endpoint_from_host(host: str, port: int | None) -> Endpoint:
    host = host.strip().strip("[]")
    if not host or not _valid_host(host):
        raise ValidationFailed({"host": "Enter a hostname or an IP address (no scheme, no path)."})
    port = GATEWAY_PORT if port is None else port
    if not 1 <= port <= 65535:
        raise ValidationFailed({"port": "Enter a port between 1 and 65535."})
    _check_port(port, "port")
    shown_host = f"[{host}]" if ":" in host else host
    return Endpoint(url=f"http://{shown_host}:{port}", host=host, port=port)


def adopt_endpoint_resolve(request: AdoptRequest) -> Endpoint:
    """The adopted gateway's endpoint, checked for syntax, port and address safety (400)."""
    if bool(request.url) == bool(request.host):
        raise ValidationFailed({"url": "Send either url or host (with an optional port)."})
    endpoint = _endpoint_from_url(request.url) if request.url else _endpoint_from_host(request.host, request.port)
    field = "url" if request.url else "host"
    try:
        netsafety.check_host(endpoint.host, endpoint.port, allow_private=_allow_private())
    except netsafety.UnsafeTarget as exc:
        raise ValidationFailed({field: f"The endpoint is not allowed: {exc}"}) from None
    return endpoint


@transaction.atomic
def agent_adopt(*, principal: Principal, request: AdoptRequest) -> Agent:
    """POST /agents/adopt: a `running` external agent whose token is stored encrypted."""
    runtime_family = request.runtime_family or settings.DEFAULT_RUNTIME_FAMILY
    if runtime_family not in RuntimeFamily.values:
        raise ValidationFailed({"runtime_family": f"'{runtime_family}' is not a runtime; use openclaw or hermes."})
    reason = weak_token_reason(request.gateway_token)
    if reason:
        raise ValidationFailed({"gateway_token": reason})
    name = clean_name(request.name, runtime_family=runtime_family)
    endpoint = adopt_endpoint_resolve(request)
    agent_quota_check(user=principal.user)
    agent = Agent.objects.create(
        name=name,
        owner=principal.user,
        status=Status.RUNNING,
        runtime_family=runtime_family,
        deploy_target=EXTERNAL,
        execution_target_id=EXTERNAL,
        is_external=True,
        node=EXTERNAL,
        gateway_url=endpoint.url,
        gateway_host_port=endpoint.port,
        gateway_token=request.gateway_token,
        vcpu=0,
        ram_mb=0,
        disk_gb=0,
    )
    key_workspace_assign(principal=principal, agent=agent)
    agent_event(agent, "agent.adopted", f"External agent {agent.name} was adopted.", url=endpoint.url)
    task_named(FIRST_HANDSHAKE_TASK).delay_on_commit(str(agent.pk))  # its version recorded, or why not in last_error
    return agent
