"""The state-folder operations of the Docker backend (DockerBackend mixes this in).

Everything goes through the engine's archive API (stat by HEAD, read by GET, write by PUT),
which works whether the container runs or not; deleting needs a process: `rm` inside the
running container, or a short-lived helper container on the state volume when it is stopped.

Confinement: a path is normalised against /state (no absolute path, no `..`), and every
component is stat'ed on the way down, so a symlink whose target leaves /state is refused
before anything is read or written through it (the engine resolves links inside the
container's root, never the host's, but the state folder is the only place we serve).
"""

from __future__ import annotations

import base64
import io
import json
import posixpath
import tarfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import BinaryIO

from django.conf import settings
from docker import errors as docker_errors

from agents.backends.base import (
    BackendError,
    FileEntry,
    FileTooLarge,
    NotAFile,
    PathRefused,
    StatePath,
    WorkloadSpec,
)
from agents.backends.docker_engine import engine_client, engine_errors, image_user, state_volume_name
from agents.backends.tarstream import ChunkReader
from agents.families import STATE_PATH, family_of

CHUNK = 64 * 1024
_NOT_FOUND = b"executable file not found"  # the engine's words for a program the image lacks
HELPER_TIMEOUT = 60  # seconds a helper container may take to delete a folder
GO_DIR = 1 << 31  # the directory bit of the engine's file mode (Go os.FileMode)


class _ProgramMissing(Exception):
    """The image has no such program (the engine could not start it)."""


def state_relative(path: str) -> str:
    """`path` normalised relative to the state folder ("" for the folder itself); PathRefused
    for an absolute path or one climbing out with `..`."""
    raw = (path or "").strip()
    if raw.startswith("/") or "\x00" in raw:
        raise PathRefused("Paths are relative to the agent's state folder.")
    if ".." in raw.split("/"):
        raise PathRefused("Paths may not contain '..'.")
    normal = posixpath.normpath(raw) if raw else ""
    return "" if normal == "." else normal


def _absolute(relative: str) -> str:
    return posixpath.join(STATE_PATH, relative) if relative else STATE_PATH


def _inside(absolute: str) -> bool:
    return absolute == STATE_PATH or absolute.startswith(STATE_PATH + "/")


def _stat_header(response) -> dict:
    raw = response.headers.get("X-Docker-Container-Path-Stat") or ""
    try:
        return json.loads(base64.b64decode(raw)) if raw else {}
    except ValueError:
        return {}


def _is_dir(mode: int) -> bool:
    return bool(mode & GO_DIR)


class DockerStateFiles:
    """Mixed into DockerBackend: needs `host`, `_require(agent)`, `engine_errors`, `engine_client`."""

    # -- confinement ----------------------------------------------------------------------

    def _head(self, container, absolute: str) -> dict | None:
        """The engine's stat of a path in the container (not following a final symlink), None
        when it does not exist."""
        api = container.client.api
        response = api.head(api._url("/containers/{0}/archive", container.id), params={"path": absolute})
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise BackendError(f"The Docker engine refused to stat {absolute} ({response.status_code}).")
        return _stat_header(response)

    def _resolve(self, container, relative: str) -> tuple[str, dict | None]:
        """Walk `relative` from the state folder, refusing a symlink that leads outside it;
        (the absolute path, its stat or None when the last part does not exist)."""
        current = STATE_PATH
        stat = self._head(container, current)
        for part in [p for p in relative.split("/") if p]:
            candidate = posixpath.join(current, part)
            stat = self._head(container, candidate)
            if stat is None:
                return candidate, None  # missing: nothing beyond it can exist either
            target = stat.get("linkTarget") or ""
            if target:
                resolved = posixpath.normpath(target if target.startswith("/") else posixpath.join(current, target))
                if not _inside(resolved):
                    raise PathRefused(f"{relative!r} passes through a link that leaves the state folder.")
                stat = self._head(container, resolved)
                candidate = resolved
                if stat is None:
                    return candidate, None
            current = candidate
        return current, stat

    # -- reading --------------------------------------------------------------------------

    def stat_path(self, agent, path: str) -> StatePath:
        relative = state_relative(path)

        with engine_errors(self.host):
            container = self._require(agent)
            absolute, stat = self._resolve(container, relative)
            if stat is None:
                raise NotAFile(f"{relative or '/'} does not exist in the agent's state.")
            if not _is_dir(int(stat.get("mode") or 0)):
                # The path the links led to: what a caller judges (a secrets file) is that one.
                resolved = posixpath.relpath(absolute, STATE_PATH)
                return StatePath(path=resolved, is_dir=False, size=int(stat.get("size") or 0))
            return StatePath(path=relative, is_dir=True, size=0,
                             entries=tuple(self._entries(container, absolute, relative)))

    def _entries(self, container, absolute: str, relative: str) -> list[FileEntry]:
        """The direct children of a folder, from the headers of its archive (contents skipped).
        The engine cuts an archive short when a file in it changes as it is read (a runtime
        writing its logs or database): read once more, then a transient engine error, not a 500."""
        try:
            return self._entries_once(container, absolute, relative)
        except tarfile.TarError:
            pass  # cut short once: read it again
        try:
            return self._entries_once(container, absolute, relative)
        except tarfile.TarError as exc:
            error = BackendError(f"The engine's archive of {relative or '/'} ended early: {exc}")
            error.transient = True
            raise error from exc

    def _entries_once(self, container, absolute: str, relative: str) -> list[FileEntry]:
        chunks, _ = container.get_archive(absolute, chunk_size=CHUNK)
        entries = []
        with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as archive:
            for member in archive:
                parts = member.name.split("/")
                if len(parts) != 2 or not parts[1]:
                    continue  # the folder itself or something deeper
                kind = "dir" if member.isdir() else "link" if member.issym() or member.islnk() else "file"
                entries.append(FileEntry(
                    name=parts[1],
                    path=posixpath.join(relative, parts[1]) if relative else parts[1],
                    type=kind,
                    size=member.size if kind == "file" else 0,
                    modified_at=datetime.fromtimestamp(member.mtime, UTC),
                ))
        return sorted(entries, key=lambda e: (e.type != "dir", e.name))

    def list_files(self, agent, path: str) -> list[FileEntry]:
        found = self.stat_path(agent, path)
        if not found.is_dir:
            raise NotAFile(f"{found.path} is a file, not a folder.")
        return list(found.entries)

    def read_file(self, agent, path: str, *, max_bytes: int) -> bytes:
        relative = state_relative(path)

        with engine_errors(self.host):
            container = self._require(agent)
            absolute, stat = self._resolve(container, relative)
            if stat is None or _is_dir(int(stat.get("mode") or 0)):
                raise NotAFile(f"{relative or '/'} is not a file in the agent's state.")
            if int(stat.get("size") or 0) > max_bytes:
                raise FileTooLarge(f"{relative} is larger than {max_bytes} bytes.")
            chunks, _ = container.get_archive(absolute, chunk_size=CHUNK)
            with tarfile.open(fileobj=ChunkReader(chunks), mode="r|") as archive:
                for member in archive:
                    if member.isfile():
                        data = archive.extractfile(member).read(max_bytes + 1)
                        return data[:max_bytes]
        raise NotAFile(f"{relative} is not a regular file.")

    # -- writing --------------------------------------------------------------------------

    def write_file(self, agent, path: str, data: bytes) -> None:
        relative = state_relative(path)
        if not relative:
            raise PathRefused("Name a file inside the state folder.")

        with engine_errors(self.host):
            container = self._require(agent)
            uid, gid = image_user(container.attrs)
            # The deepest existing folder (links resolved and checked), then what is missing.
            parts = relative.split("/")
            base, missing = STATE_PATH, []
            for index in range(len(parts)):
                absolute, stat = self._resolve(container, "/".join(parts[: index + 1]))
                if stat is None:
                    missing = parts[index:]
                    break
                if index < len(parts) - 1:
                    if not _is_dir(int(stat.get("mode") or 0)):
                        raise PathRefused(f"{'/'.join(parts[: index + 1])} is a file, not a folder.")
                    base = absolute
                elif _is_dir(int(stat.get("mode") or 0)):
                    raise NotAFile(f"{relative} is a folder.")
                else:
                    base, missing = posixpath.dirname(absolute), [posixpath.basename(absolute)]
            buffer = io.BytesIO()
            now = int(time.time())
            with tarfile.open(fileobj=buffer, mode="w") as archive:
                for depth in range(1, len(missing)):
                    info = tarfile.TarInfo("/".join(missing[:depth]))
                    info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, 0o700, uid, gid, now
                    archive.addfile(info)
                info = tarfile.TarInfo("/".join(missing))
                info.size, info.mode, info.uid, info.gid, info.mtime = len(data), 0o600, uid, gid, now
                archive.addfile(info, io.BytesIO(data))
            if not container.put_archive(base, buffer.getvalue()):
                raise BackendError(f"The Docker engine refused to write {relative}.")

    def delete_file(self, agent, path: str) -> None:
        relative = state_relative(path)
        if not relative:
            raise PathRefused("The state folder itself cannot be deleted.")

        with engine_errors(self.host):
            container = self._require(agent)
            parent, stat = self._resolve(container, posixpath.dirname(relative))
            if stat is None:
                raise NotAFile(f"{relative} does not exist in the agent's state.")
            # The last part itself is removed, never what a link points to.
            absolute = posixpath.join(parent, posixpath.basename(relative))
            if self._head(container, absolute) is None:
                raise NotAFile(f"{relative} does not exist in the agent's state.")
        # `rm` where the image has it, else the runtime's own interpreter (an operator's image
        # may have no coreutils; it has what its runtime runs on).
        for command in (("rm", "-rf", "--"), family_of(agent.runtime_family).remove_command):
            try:
                return self._run_on_state(agent, [*command, absolute])
            except _ProgramMissing:
                continue
        raise BackendError("The image has neither rm nor its runtime's interpreter: the file was not deleted.")

    def _run_on_state(self, agent, argv: list[str]) -> None:
        """Run argv where the state volume is: in the running container, else in a helper.
        _ProgramMissing when the image has no argv[0]."""

        with engine_errors(self.host):
            container = self._require(agent)
            if container.status == "running":
                result = self.exec(agent, argv, timeout=HELPER_TIMEOUT, max_output=4096)
                if result.exit_code in (126, 127) and _NOT_FOUND in result.output:
                    raise _ProgramMissing(argv[0])
                if result.exit_code != 0:
                    raise BackendError(f"Could not change the state: {result.output[:200]!r}")
                return
            client = engine_client(self.host)
            helper = client.containers.create(
                container.image.id, entrypoint=argv[:1], command=argv[1:], user=container.attrs["Config"].get("User"),
                volumes={state_volume_name(str(agent.id)): {"bind": STATE_PATH, "mode": "rw"}},
                network_mode="none", labels=_helper_labels("delete"),
            )
            try:
                try:
                    helper.start()
                except docker_errors.APIError as exc:
                    if _NOT_FOUND.decode() in str(exc):
                        raise _ProgramMissing(argv[0]) from exc
                    raise
                outcome = helper.wait(timeout=HELPER_TIMEOUT)
                if outcome.get("StatusCode") != 0:
                    raise BackendError("Could not change the state (helper container failed).")
            finally:
                helper.remove(force=True)

    # -- export and import -----------------------------------------------------------------

    def export_state(self, agent) -> Iterator[bytes]:

        with engine_errors(self.host):
            container = self._require(agent)
            chunks, _ = container.get_archive(STATE_PATH + "/", chunk_size=CHUNK)

        def stream():
            with engine_errors(self.host):
                yield from chunks

        return stream()

    def import_state(self, agent, spec: WorkloadSpec, archive: BinaryIO) -> None:
        """Create the state volume (as `create` would) and copy the archive into it through a
        helper container that is created, never started: the engine fills a new volume from the
        image's /state, and put_archive works on a stopped container's volumes."""

        client = engine_client(self.host)
        with engine_errors(self.host):
            self._ensure_state_volume(client, spec)
            options = {"entrypoint": ["true"], "network_mode": "none", "labels": _helper_labels("import"),
                       "volumes": {state_volume_name(spec.agent_id): {"bind": STATE_PATH, "mode": "rw"}}}
            try:
                helper = client.containers.create(spec.image, **options)
            except docker_errors.ImageNotFound:
                self._pull(client, spec)  # as `create` does: the workload needs it next anyway
                helper = client.containers.create(spec.image, **options)
            try:

                uid, gid = image_user(helper.attrs)
                if not helper.put_archive(STATE_PATH, _owned_by(archive, uid, gid)):
                    raise BackendError("The Docker engine refused to restore the state.")
            finally:
                try:
                    helper.remove(force=True)
                except docker_errors.NotFound:
                    pass


def _helper_labels(job: str) -> dict[str, str]:
    # Never the agent's label: `create` and `_find` must not take a helper for the workload.
    return {**settings.DOCKER_CONTAINER_LABELS, "fleet.helper": job}


def _owned_by(archive: BinaryIO, uid: int, gid: int) -> Iterator[bytes]:
    """The `state/...` entries of an uncompressed tar, renamed relative to the state folder and
    owned by the runtime's user, as a stream of tar chunks (members are copied in chunks)."""
    with tarfile.open(fileobj=archive, mode="r|") as source:
        for member in source:
            name = member.name[len("state/"):] if member.name.startswith("state/") else ""
            if not name or not (member.isfile() or member.isdir()):
                continue
            member.name, member.uid, member.gid, member.uname, member.gname = name, uid, gid, "", ""
            member.mode &= 0o777
            yield member.tobuf(format=tarfile.PAX_FORMAT)
            if member.isfile():
                handle = source.extractfile(member)
                remaining = member.size
                while remaining > 0:
                    block = handle.read(min(CHUNK, remaining))
                    if not block:
                        raise BackendError("The state archive ended early.")
                    remaining -= len(block)
                    yield block
                padding = -member.size % tarfile.BLOCKSIZE
                if padding:
                    yield b"\0" * padding
    yield b"\0" * (tarfile.BLOCKSIZE * 2)
