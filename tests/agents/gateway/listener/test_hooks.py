"""The hook registry: what an app registers from AppConfig.ready() to get an agent's events."""

from __future__ import annotations

import pytest

from agents.gateway import listener_hooks, register_listener_hook, unregister_listener_hook
from agents.gateway.hooks import listener_hook
from agents.gateway.protocol import ADMIN, APPROVAL_CAPS, APPROVALS


def _everyone(agents):
    return agents


def _ignore(agent_id, event, payload):
    return None


def test_a_registered_hook_is_listed_with_what_it_asks_for():
    hook = register_listener_hook("tests.approvals", events={"exec.approval.requested"}, wants=_everyone,
                                  handler=_ignore, scopes=[ADMIN, APPROVALS], caps=APPROVAL_CAPS)

    assert listener_hook("tests.approvals") == hook
    assert hook in listener_hooks()
    assert hook.scopes == {"operator.admin", "operator.approvals"}
    assert hook.caps == {"approvals", "exec-approvals"}


def test_registering_the_same_hook_again_changes_nothing_and_a_new_definition_replaces_it():
    first = register_listener_hook("tests.again", events={"health"}, wants=_everyone, handler=_ignore)
    register_listener_hook("tests.again", events={"health"}, wants=_everyone, handler=_ignore)
    assert [h for h in listener_hooks() if h.name == "tests.again"] == [first]

    register_listener_hook("tests.again", events={"config.changed"}, wants=_everyone, handler=_ignore)
    (hook,) = [h for h in listener_hooks() if h.name == "tests.again"]
    assert hook.events == {"config.changed"}


def test_an_unregistered_hook_is_gone():
    register_listener_hook("tests.gone", events={"health"}, wants=_everyone, handler=_ignore)

    unregister_listener_hook("tests.gone")
    unregister_listener_hook("tests.gone")  # twice: nothing to do

    assert listener_hook("tests.gone") is None


@pytest.mark.parametrize(("arguments", "complaint"), [
    ({"events": set()}, "events"),
    ({"events": "health"}, "events must be a collection"),
    ({"scopes": {"operator.everything"}}, "unknown operator scopes"),
    ({"caps": {""}}, "caps"),
    ({"handler": "not callable"}, "callables"),
    ({"name": " "}, "needs a name"),
])
def test_a_malformed_hook_is_refused_when_it_is_registered(arguments, complaint):
    given = {"name": "tests.bad", "events": {"health"}, "wants": _everyone, "handler": _ignore, **arguments}
    name = given.pop("name")

    with pytest.raises(ValueError, match=complaint):
        register_listener_hook(name, **given)
    assert listener_hook(name) is None
