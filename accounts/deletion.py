"""Deleting a user: the one door (the admin console's single and bulk delete use it).

A user may own things whose deletion is more than dropping a row: an agent has a workload on an
engine, a Remote Docker host may run other people's agents. Those apps sit above accounts, so
they register a holder from their AppConfig.ready() (`user_holder_register`): given a user, it
says what must be deleted first (the deletion is refused, naming it) and what goes with the user
through the app's own services (an idle Remote Docker host and its grants). Rows that still
point at the user with PROTECT (agents, hosts, owned workspaces) refuse the deletion too, so no
other path strands a workload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Model, ProtectedError

from fleet.errors import Conflict

from .models import User


class UserInUse(Conflict):
    code = "user_in_use"
    default_message = "The user still owns things that must be deleted first."


@dataclass(frozen=True)
class UserHoldings:
    """What one app holds of a user about to be deleted.

    `blockers`: lines naming what must be deleted first (the deletion is refused while any);
    `held`: the objects those lines name; `released`: objects that go with the user, deleted by
    `release()` through the app's services right before the user."""

    blockers: tuple[str, ...] = ()
    held: tuple[Model, ...] = ()
    released: tuple[Model, ...] = ()
    release: Callable[[], None] | None = None


Holder = Callable[[User], UserHoldings]
_holders: list[Holder] = []

NAMED_AT_MOST = 10  # a refusal names this many things, then counts the rest


def named(objects) -> str:
    """"'a', 'b' and 3 more": the things (anything with a `name`) a holder's line names."""
    names = [f"'{item.name}'" for item in objects[:NAMED_AT_MOST]]
    more = len(objects) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


def user_holder_register(holder: Holder) -> None:
    """Called from an AppConfig.ready(); registering the same holder twice is a no-op."""
    if holder not in _holders:
        _holders.append(holder)


def user_holdings(*, user: User) -> list[UserHoldings]:
    return [holder(user) for holder in _holders]


def _refusal(user: User, lines: list[str]) -> UserInUse:
    return UserInUse(f"{user.email} cannot be deleted yet. Delete first: {'; '.join(lines)}.")


@transaction.atomic
def user_delete(*, user: User) -> None:
    """Delete the user, with what goes along (released by its app's services), or refuse with
    409 user_in_use naming what must be deleted first. Nothing is deleted on a refusal."""
    locked = User.objects.select_for_update().filter(pk=user.pk).first()
    if locked is None:
        return
    holdings = user_holdings(user=locked)
    blockers = [line for held in holdings for line in held.blockers]
    if blockers:
        raise _refusal(locked, blockers)
    for held in holdings:
        if held.release is not None:
            held.release()
    try:
        with transaction.atomic():
            locked.delete()
    except ProtectedError as exc:  # something registered meanwhile, or a row no holder names
        names = sorted(f"{obj._meta.verbose_name} '{obj}'" for obj in exc.protected_objects)
        raise _refusal(locked, names) from None
