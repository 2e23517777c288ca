"""Whether a proxied request may reach its agent, asked again on every request: the cookie's
credential still holds, its holder is still an editor of the agent, the agent serves."""

from __future__ import annotations

from dataclasses import dataclass

from fleet.errors import NotAuthenticated
from workspaces.principals import principal_from_ref
from workspaces.roles import Role

from ..gateway import RuntimeGateway, gateway_for
from ..gateway.ui_relay import UiRelay
from ..selectors import agent_access

SIGN_IN_AGAIN = "Your session for this agent has ended; open its UI from Fleet again."


@dataclass(frozen=True)
class ProxyTarget:
    gateway: RuntimeGateway
    user: object  # who holds the cookie (their streams count against their cap)

    def ui_relay(self) -> UiRelay:
        """The family's frame relay; it may read the database (OpenClaw's device key): call it
        in the Django thread."""
        return self.gateway.ui_relay()


def proxy_target(*, agent_id, principal_ref: dict) -> ProxyTarget:
    """The agent's gateway, for the holder of the cookie: 401 when its credential ended, 404 or
    403 when it may no longer operate the agent, 409/502 when the agent cannot be reached."""
    principal = principal_from_ref(principal_ref)
    if principal is None:
        raise NotAuthenticated(SIGN_IN_AGAIN)
    access = agent_access(principal, agent_id, min_role=Role.EDITOR)
    return ProxyTarget(gateway=gateway_for(access.agent), user=principal.user)
