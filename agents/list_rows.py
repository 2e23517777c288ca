"""GET /agents after a write: the body put together from each row's JSON kept in this process,
only the rows that changed read and serialized again.

Any write a list shows moves the list version (agents.list_triggers), so the whole body kept by
agents.list_cache misses for every caller after it; rebuilding 1,000 rows took about 12 ms.
Here each row's JSON is kept per caller under its agent's two revisions, which database
triggers move whenever that row may read differently (agents.list_revisions: the agent's own
for its listed columns and owner, its assignments' for its workspaces, labels and those
workspaces' names). A list then costs:

1. the caller's memberships (workspaces.access.workspace_roles; none for an API key),
2. (id, revisions) of every listed agent, in the list's order: one narrow query,
3. for the rows whose revisions moved (or that are new): their agents, and the assignments of
   those whose assignments' revision moved (each kept row keeps what it took from its
   assignments), one or two queries by id, and their JSON;

and the body is the kept JSON joined. A caller seen for the first time (or whose rows were let
go) reads the whole list at once, as does a list where most rows moved.

Why no caller ever gets a stale or a foreign row:
- A row is a function of its agent's data at its revisions and of the caller
  (agents.selectors.agent_list_rows: nothing else is read). So the rows are kept per caller
  context: list_cache.caller_key (user, platform role, credential kind, key and its workspace
  and scopes, scope) and the memberships read in step 1, workspace and role. A membership that
  changes makes another context; two callers share rows only when all of that is equal.
- A row's revisions are read in the same statement as the agent's columns; its assignments are
  read after, so they are at least as new. A write committed in between moves a revision, so
  the row kept under the older ones is never used again: it is read again at the next list.
- A kept row is used only when both revisions read in step 2 equal the ones it was kept under;
  revisions are never reused (agents.list_revisions), even across a restore from a backup. A
  row read again takes the links kept with it (workspaces[], the caller's role) only when the
  assignments' revision read with its columns is still theirs: the same rule, for that half.
- Which rows are listed is step 2's answer (the visibility rules of agents.selectors), read
  after the list version the ETag carries; step 3 reads by those ids alone (a row deleted
  meanwhile is left out), and what a row shows of workspaces is filtered by the caller's
  memberships of step 1, never by another caller's.
- Inside a transaction nothing is read from or kept here (that transaction may see rows no one
  else will), nor on SQLite, where nothing moves the revisions: the list is built whole.

Memory: AGENT_LIST_ROWS_MB per process, the callers used least recently let go first; rows of
agents no longer listed are dropped when the list is next built for that caller.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from uuid import UUID

from django.conf import settings
from django.db import connection

from fleet.api.principal import Principal
from fleet.api.renderers import dumps
from workspaces.access import workspace_roles
from workspaces.roles import Role

from .list_cache import caller_key
from .selectors import Links, agent_list, agent_list_revisions, agent_list_rows

# What a kept row costs besides its JSON: its slot in the caller's dict, the entry's tuple, the
# id's str, the revisions' ints, the bytes object's header and its links' tuple and list (their
# workspace items are shared): 413 bytes measured with tracemalloc for 10,000 rows, rounded up.
ENTRY_OVERHEAD = 420
# Above this share of rows to read again, one query for the whole list costs less than two by id.
WHOLE_LIST_SHARE = 0.5


_Entry = tuple[int, int | None, bytes, Links]


class _Rows:
    """One caller context's rows: agent id -> (its revision, its assignments' revision, JSON, its
    links: what it takes from its assignments, agents.selectors.Links), and what they cost in
    bytes."""

    __slots__ = ("by_id", "size")

    def __init__(self, by_id: dict[str, _Entry]):
        self.by_id = by_id
        self.size = sum(len(entry[2]) for entry in by_id.values()) + ENTRY_OVERHEAD * len(by_id)


_contexts: OrderedDict[str, _Rows] = OrderedDict()
_kept_bytes = 0
_lock = threading.Lock()  # the contexts' order and sizes; a web process may serve from threads


def usable() -> bool:
    return settings.AGENT_LIST_ROWS_MB > 0 and connection.vendor == "postgresql" and not connection.in_atomic_block


def context_key(principal: Principal, roles: dict[UUID, Role], scope: str) -> str:
    """Everything besides its agent's data that a row depends on (see the module's docstring)."""
    memberships = ",".join(sorted(f"{workspace_id}:{int(role or 0)}" for workspace_id, role in roles.items()))
    return f"{caller_key(principal, scope)}|{memberships}"


def list_body(principal: Principal, *, scope: str = "accessible") -> bytes:
    """The JSON body of GET /agents for this caller and scope, as dumps(agent_list(...)) writes it."""
    if not usable():
        return dumps(agent_list(principal, scope=scope))
    roles = workspace_roles(principal)
    key = context_key(principal, roles, scope)
    kept = _touch(key)
    if kept is None:
        return _whole_list(principal, roles, key, scope)
    listed = agent_list_revisions(principal, scope=scope)
    parts: list[bytes | None] = []
    stale: list[int] = []  # positions in `parts` of rows to read again
    by_id = kept.by_id
    for agent_id, revision, assigned in listed:
        entry = by_id.get(agent_id)
        if entry is not None and entry[0] == revision and entry[1] == assigned:
            parts.append(entry[2])
        else:
            stale.append(len(parts))
            parts.append(None)
    if len(stale) > WHOLE_LIST_SHARE * len(listed):
        return _whole_list(principal, roles, key, scope)
    if stale:
        ids = [listed[at][0] for at in stale]
        # A row whose assignments' revision has not moved keeps its links: its assignments
        # are not read again (a status change reads the agent's columns alone).
        known = {agent_id: (entry[1], entry[3]) for agent_id in ids if (entry := by_id.get(agent_id)) is not None}
        fresh = {agent_id: (revision, assigned, dumps(row), links) for agent_id, revision, assigned, row, links
                 in agent_list_rows(principal, roles, scope=scope, agent_ids=ids, known=known)}
        for at, agent_id in zip(stale, ids, strict=True):
            entry = fresh.get(agent_id)  # none: deleted meanwhile
            parts[at] = entry[2] if entry is not None else None
        _patch(key, kept, fresh, listed)
        parts = [part for part in parts if part is not None]
    elif len(by_id) > len(listed):
        _patch(key, kept, {}, listed)
    return _joined(parts)


def _joined(parts) -> bytes:
    """What orjson writes for the list of these rows: no whitespace between items."""
    return b"[" + b",".join(parts) + b"]"


def _whole_list(principal: Principal, roles: dict[UUID, Role], key: str, scope: str) -> bytes:
    by_id = {agent_id: (revision, assigned, dumps(row), links)
             for agent_id, revision, assigned, row, links in agent_list_rows(principal, roles, scope=scope)}
    _keep(key, _Rows(by_id))
    return _joined(entry[2] for entry in by_id.values())  # in the list's order, as read


def _touch(key: str) -> _Rows | None:
    with _lock:
        kept = _contexts.get(key)
        if kept is not None:
            _contexts.move_to_end(key)
        return kept


def _keep(key: str, rows: _Rows) -> None:
    """Keep a context's rows, replacing what it had."""
    global _kept_bytes
    with _lock:
        old = _contexts.pop(key, None)
        if old is not None:
            _kept_bytes -= old.size
        _contexts[key] = rows
        _kept_bytes += rows.size
        _fit()


def _patch(key: str, kept: _Rows, fresh: dict[str, _Entry],
           listed: list[tuple[str, int, int | None]]) -> None:
    """Put the rows read again in the context's place (in place: a few rows, not the whole
    dict), dropping the rows of agents no longer listed."""
    global _kept_bytes
    with _lock:
        if _contexts.get(key) is not kept:  # let go meanwhile
            return
        by_id, before = kept.by_id, kept.size
        for agent_id, entry in fresh.items():
            old = by_id.get(agent_id)
            kept.size += len(entry[2]) - (len(old[2]) if old is not None else -ENTRY_OVERHEAD)
            by_id[agent_id] = entry
        if len(by_id) > len(listed):
            kept.by_id = {agent_id: by_id[agent_id] for agent_id, _, _ in listed if agent_id in by_id}
            kept.size = _Rows(kept.by_id).size
        _kept_bytes += kept.size - before
        _fit()


def _fit() -> None:
    """Under _lock: let go of the least recently used contexts until AGENT_LIST_ROWS_MB holds
    them all (the most recent one too, when it alone is larger)."""
    global _kept_bytes
    limit = settings.AGENT_LIST_ROWS_MB * 1024 * 1024
    while _contexts and _kept_bytes > limit:
        _kept_bytes -= _contexts.popitem(last=False)[1].size


def kept_bytes() -> int:
    """What the kept rows cost, as counted against AGENT_LIST_ROWS_MB."""
    return _kept_bytes


def forget_rows() -> None:
    global _kept_bytes
    with _lock:
        _contexts.clear()
        _kept_bytes = 0
