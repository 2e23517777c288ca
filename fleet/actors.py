"""Who is causing what happens now: the person (or their workspace API key) behind the request
being served, named in the events it emits (fleet.events). ActorMiddleware keeps the request
for the request's duration and the name is read only when an event is emitted (most requests
emit none: no lookup for them). DRF puts the user and the principal it authenticated (bearer
session or API key) on the same request. Tasks, the scheduler and the listener have no actor."""

from __future__ import annotations

from contextvars import ContextVar

from .api.principal import Principal

_serving: ContextVar = ContextVar("fleet_actor_request", default=None)


def actor_label() -> str:
    """The e-mail of the signed-in user serving now, "(API key)" after it for a key; "" for none."""
    request = _serving.get()
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return ""
    principal = getattr(request, "auth", None)  # DRF's, on API requests; the console's session has none
    return principal.actor_label if isinstance(principal, Principal) else user.email


class ActorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = _serving.set(request)
        try:
            return self.get_response(request)
        finally:
            _serving.reset(token)
