"""Where an agent's gateway is reached, with which secret, and through which safety checks.

Provisioned agents are reached where their backend says (`gateway_endpoint`, through the
engine's door, so its failures read as everywhere else). Adopted agents are reached at the URL
they were registered with, only while their stored token passes the strength rule, and only
through fleet.netsafety: HTTP goes through its safe session, and a WebSocket dials an address
that `check_host` validated at connect time (the name still goes in the Host header and SNI).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests
from django.conf import settings

from fleet import netsafety

from ..backends.base import RuntimeBackend
from ..backends.engine import engine_call
from ..families import Family, family_of
from ..models import SERVING, Agent, Status
from .errors import AgentNotRunning, GatewayUnreachable, GatewayUnsupported
from .tokens import weak_token_reason

# `allow_starting`: a deploy whose workload is being started answers too.
STARTING = (Status.DEPLOYING,)


@dataclass(frozen=True)
class Endpoint:
    family: Family
    scheme: str  # "http" or "https"
    host: str  # a name or an address, as configured (no brackets)
    port: int
    path: str = ""  # an adopted gateway may live under a path prefix
    token: str = field(default="", repr=False)
    external: bool = False
    allow_private: bool = False
    agent_id: str = ""

    @property
    def _authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def http_url(self, route: str) -> str:
        return f"{self.scheme}://{self._authority}{self.path}{route}"

    @property
    def ws_url(self) -> str:
        return self.ws_url_for("/")

    def ws_url_for(self, target: str) -> str:
        scheme = "wss" if self.scheme == "https" else "ws"
        return f"{scheme}://{self._authority}{self.path}{target}"

    @property
    def origin(self) -> str:
        """The runtime's own origin, as a page it served itself would send it."""
        return f"{self.scheme}://{self._authority}"

    def dial_addresses(self) -> list[str]:
        """The addresses to connect to. For adopted agents: resolved now and every one checked
        (UnsafeTarget becomes GatewayUnreachable), so DNS cannot swap in a forbidden address
        between a check and the connect. Blocking (DNS): call it outside the event loop."""
        if not self.external:
            return [self.host]
        try:
            return [str(ip) for ip in netsafety.check_host(self.host, self.port, allow_private=self.allow_private)]
        except netsafety.UnsafeTarget as exc:
            raise GatewayUnreachable(f"The agent's gateway address is not allowed: {exc}") from None

    def http_session(self) -> requests.Session:
        if self.external:
            return netsafety.safe_session(allow_private=self.allow_private)
        session = requests.Session()
        session.trust_env = False  # a runtime Fleet placed is reached directly, never via a proxy
        return session


def _readable_token(agent: Agent) -> str:
    token = agent.gateway_token
    if not isinstance(token, str) or not token:  # None, or an UndecryptableSecret
        raise GatewayUnreachable("The agent's gateway token is missing or cannot be decrypted.")
    return token


def _adopted(agent: Agent, family: Family, token: str) -> Endpoint:
    if weak_token_reason(token):
        raise GatewayUnreachable("The adopted agent's stored token is weak; rotate it before Fleet uses it.")
    parts = urlsplit(agent.gateway_url or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GatewayUnreachable("The adopted agent has no valid gateway URL.")
    return Endpoint(
        family=family,
        scheme=parts.scheme,
        host=parts.hostname,
        port=port or (443 if parts.scheme == "https" else 80),
        path=parts.path.rstrip("/"),
        token=token,
        external=True,
        allow_private=settings.PLATFORM_MODE != "paas",
        agent_id=str(agent.pk),
    )


def _provisioned(agent: Agent, family: Family, token: str, backend: RuntimeBackend | None) -> Endpoint:
    host, port = engine_call(agent, lambda backend: backend.gateway_endpoint(agent), reading=True, backend=backend)
    return Endpoint(family=family, scheme="http", host=host.strip("[]"), port=int(port), token=token,
                    agent_id=str(agent.pk))


def endpoint_for(agent: Agent, *, allow_starting: bool = False, backend: RuntimeBackend | None = None) -> Endpoint:
    """The agent's gateway endpoint; AgentNotRunning unless it is running or warning
    (or deploying, with `allow_starting`, for the provisioning job's health wait). `backend`:
    the agent's, resolved already (the monitoring sweep resolves each engine's once)."""
    allowed = SERVING + STARTING if allow_starting else SERVING
    if agent.status not in allowed:
        raise AgentNotRunning(f"The agent is not running (it is {agent.status}).")
    try:
        family = family_of(agent.runtime_family)
    except KeyError:
        raise GatewayUnsupported(f"Fleet has no gateway client for the runtime {agent.runtime_family!r}.") from None
    token = _readable_token(agent)
    if agent.is_external:
        return _adopted(agent, family, token)
    return _provisioned(agent, family, token, backend)
