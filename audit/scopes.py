"""Which workspaces a row belongs to beyond the path's or the key's own: those its target is in.
The apps that own targets sit above audit, so each registers, when it is ready, how to find the
workspaces of its targets: by the path parameter that names one (read before the change, so a
delete still finds them) and by target type (a console change, a service's record)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from uuid import UUID

WorkspacesOf = Callable[[object], Iterable[UUID]]

_by_path_param: dict[str, WorkspacesOf] = {}
_by_target_type: dict[str, WorkspacesOf] = {}


def register_target_workspaces(*, path_param: str, target_types: Iterable[str], workspaces_of: WorkspacesOf) -> None:
    """`workspaces_of(id)` -> the workspaces of the target named by `path_param` in a route, or
    by one of `target_types` in a row."""
    _by_path_param[path_param] = workspaces_of
    for target_type in target_types:
        _by_target_type[target_type] = workspaces_of


def workspaces_of_path(kwargs: dict) -> frozenset[UUID]:
    """The workspaces of every target a route's path names (a query each, before the change)."""
    found: set[UUID] = set()
    for name, value in kwargs.items():
        if name in _by_path_param:
            found.update(_by_path_param[name](value))
    return frozenset(found)


def workspaces_of_target(target_type: str, target_id: object) -> frozenset[UUID]:
    workspaces_of = _by_target_type.get(target_type)
    return frozenset(workspaces_of(target_id)) if workspaces_of is not None and target_id else frozenset()
