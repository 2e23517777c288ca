"""The agent's state folder through its backend: list, read, write, delete, export.

All go through agents.backends.engine's door; the backend's own refusals become the errors of
.errors (a path out of the state folder 400, a missing one 404, a file over the cap 413). A
target whose backend lacks the operations answers 409 unsupported.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from typing import TypeVar

from django.conf import settings

from fleet.errors import NoContainer, NoContainerToInspect

from ..backends.base import FileEntry, FileTooLarge, NotAFile, PathRefused, StateFiles, StatePath
from ..backends.engine import engine_call
from ..backends.registry import is_registered
from ..models import Agent
from .bundle import is_secret_path
from .errors import FilesUnsupported, FileTooLargeToRead, PathOutsideState, SecretFile, StatePathMissing

T = TypeVar("T")


def _state_call(agent: Agent, operation: Callable[[StateFiles], T], *, reading: bool) -> T:
    if agent.is_external or not agent.container_id:
        # Adopted runtimes have no workload of ours; a queued one has none yet.
        raise (NoContainerToInspect if reading else NoContainer)("The agent has no workload whose state could be read.")
    if not is_registered(agent.execution_target_id):
        # A target with no backend here, or whose cluster or host is no longer registered.
        raise FilesUnsupported()

    def call(backend):
        if not isinstance(backend, StateFiles):
            raise FilesUnsupported()
        try:
            return operation(backend)
        except PathRefused as exc:
            raise PathOutsideState(str(exc)) from None
        except NotAFile as exc:
            raise StatePathMissing(str(exc)) from None
        except FileTooLarge as exc:
            raise FileTooLargeToRead(str(exc)) from None

    return engine_call(agent, call, reading=reading)


def state_path_read(*, agent: Agent, path: str) -> StatePath | bytes:
    """A folder's StatePath (with its entries) or a file's bytes (at most AGENT_FILE_MAX_BYTES)."""
    _refuse_secret(path)
    found = _state_call(agent, lambda backend: backend.stat_path(agent, path), reading=True)
    if found.is_dir:
        return found
    _refuse_secret(found.path)  # where a link inside the state folder led
    limit = settings.AGENT_FILE_MAX_BYTES
    if found.size > limit:
        raise FileTooLargeToRead(f"The file is larger than {limit} bytes; export the agent to get it.")
    return _state_call(agent, lambda backend: backend.read_file(agent, path, max_bytes=limit), reading=True)


def _refuse_secret(path: str) -> None:
    """Secrets files (the export's list: .env, openclaw.json, identities, keys) are listed by
    name but never read or changed here: their values are Fleet's to manage, and a viewer reads."""
    if (path or "").startswith("/") or ".." in (path or "").split("/"):
        return  # the backend refuses these as leaving the state folder (400)
    if is_secret_path(posixpath.normpath(path or ".")):
        raise SecretFile()


def state_file_write(*, agent: Agent, path: str, data: bytes) -> None:
    _refuse_secret(path)
    _state_call(agent, lambda backend: backend.write_file(agent, path, data), reading=False)


def state_file_delete(*, agent: Agent, path: str) -> None:
    _refuse_secret(path)
    _state_call(agent, lambda backend: backend.delete_file(agent, path), reading=False)


def state_export(*, agent: Agent) -> Iterator[bytes]:
    """The uncompressed tar stream of the state folder (the engine is asked before it starts)."""
    return _state_call(agent, lambda backend: backend.export_state(agent), reading=True)


def entries_of(found: StatePath) -> list[FileEntry]:
    return list(found.entries)
