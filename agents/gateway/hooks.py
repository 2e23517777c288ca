"""The gateway listener's hooks: how an app says which agents' events it needs and gets them.

For example (what the sandbox app might register; its hook and handler are the sandbox's to write):

    # sandbox/apps.py, in SandboxConfig.ready()
    from agents.gateway import register_listener_hook
    from agents.gateway.protocol import ADMIN, APPROVAL_CAPS, APPROVALS

    register_listener_hook(
        "sandbox.approvals",
        events={"exec.approval.requested", "exec.approval.resolved"},
        wants=lambda agents: agents.filter(sandbox_profile="nemoclaw"),
        scopes={ADMIN, APPROVALS}, caps=set(APPROVAL_CAPS),
        handler=approval_event_record,        # (agent_id: str, event: str, payload: dict) -> None
    )

The listener (agents/gateway/listener) holds one connection per running OpenClaw agent that at
least one hook wants, with the union of the scopes and caps of the hooks that want it, and hands
each event to the hooks that want that agent and listen for that event's name. With no hook
wanting an agent, the listener does not connect to it. `wants` gets a queryset of the running
and warning OpenClaw agents and returns it narrowed (it runs on every refresh, so keep it one
query). `handler` is sync Django code; it runs in a worker thread, never on the event loop, and
an exception it raises is logged and does not reach the connection or the other hooks.

Apps register from AppConfig.ready(). Registering a name again replaces its definition, so a
second ready() (or a test) registering the same hook changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db.models import QuerySet

from .protocol import OPERATOR_SCOPES

Wants = Callable[[QuerySet], QuerySet]
Handler = Callable[[str, str, dict], None]


@dataclass(frozen=True)
class ListenerHook:
    name: str
    events: frozenset[str]
    wants: Wants
    handler: Handler
    scopes: frozenset[str] = frozenset()
    caps: frozenset[str] = frozenset()


_hooks: dict[str, ListenerHook] = {}
_lock = threading.Lock()  # registration may race the listener's reads in tests


def register_listener_hook(name: str, *, events: Iterable[str], wants: Wants, handler: Handler,
                           scopes: Iterable[str] = (), caps: Iterable[str] = ()) -> ListenerHook:
    """Register (or replace) the hook `name`; see the module docstring."""
    for label, given in (("events", events), ("scopes", scopes), ("caps", caps)):
        if isinstance(given, str):  # a bare string would become a set of its letters
            raise ValueError(f"Listener hook {name!r}: {label} must be a collection of strings, not one string.")
    hook = ListenerHook(name=name, events=frozenset(events), wants=wants, handler=handler,
                        scopes=frozenset(scopes), caps=frozenset(caps))
    _validate(hook)
    with _lock:
        _hooks[name] = hook
    return hook


def unregister_listener_hook(name: str) -> None:
    with _lock:
        _hooks.pop(name, None)


def listener_hooks() -> tuple[ListenerHook, ...]:
    """Every registered hook, in registration order."""
    with _lock:
        return tuple(_hooks.values())


def listener_hook(name: str) -> ListenerHook | None:
    with _lock:
        return _hooks.get(name)


def _validate(hook: ListenerHook) -> None:
    if not isinstance(hook.name, str) or not hook.name.strip():
        raise ValueError("A listener hook needs a name.")
    if not hook.events or not all(isinstance(e, str) and e for e in hook.events):
        raise ValueError(f"Listener hook {hook.name!r}: events must be a non-empty set of event names.")
    unknown = hook.scopes - OPERATOR_SCOPES
    if unknown:
        raise ValueError(f"Listener hook {hook.name!r}: unknown operator scopes {sorted(unknown)}.")
    if not all(isinstance(c, str) and c for c in hook.caps):
        raise ValueError(f"Listener hook {hook.name!r}: caps must be non-empty strings.")
    if not callable(hook.wants) or not callable(hook.handler):
        raise ValueError(f"Listener hook {hook.name!r}: wants and handler must be callables.")
