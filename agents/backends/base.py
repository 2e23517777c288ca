"""The one protocol every deploy target implements.

Deploy, redeploy, delete, stats and monitoring talk to a workload only through a
`RuntimeBackend` obtained from `agents.backends.registry.backend_for(agent)`; nothing
outside this package branches on the target.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import BinaryIO, Protocol, runtime_checkable

# What every backend marks a workload with, and where a runtime listens inside its workload.
LABEL_AGENT_ID = "fleet.agent_id"
LABEL_MANAGED = "fleet.managed"
GATEWAY_PORT = 18789



# The steps of creating a workload that a backend reports through WorkloadSpec.on_step.
STEP_PULLING, STEP_CREATING = "pulling", "creating"

# The user every runtime image runs as (agents.images builds them so): not 1000, which is often a
# person's account on the host.
RUNTIME_UID = 10001


class UnknownTarget(ValueError):
    """No registered backend serves this execution target id."""

class BackendError(Exception):
    """A backend operation failed. `transient` errors are worth retrying; a backend may set
    it on one instance (an engine's 5xx answer is transient, its 4xx is not)."""

    transient = False


class BackendUnreachable(BackendError):
    """The engine (daemon, API server, host) cannot be reached: 502 daemon_unreachable."""

    transient = True


class WorkloadMissing(BackendError):
    """The workload the agent points at no longer exists."""


@dataclass(frozen=True)
class WorkloadSpec:
    """Everything a backend needs to create an agent's workload."""

    agent_id: str
    name: str  # container / Deployment name
    runtime_family: str  # openclaw | hermes
    image: str
    env: dict[str, str]
    labels: dict[str, str]
    vcpu: float
    ram_mb: int
    disk_gb: int
    gateway_port: int = GATEWAY_PORT  # the port the runtime listens on inside the workload
    # Told each step a backend reaches on its own (STEP_PULLING, STEP_CREATING): the deploy's
    # progress, which the agent services keep (agents.deploy_progress).
    on_step: Callable[[str], None] = field(default=lambda step: None, compare=False, repr=False)


@dataclass(frozen=True)
class Placement:
    """Where a created workload lives."""

    container_id: str
    container_name: str
    node: str
    host_port: int | None


CRASH_LOOP_RESTARTS = 3  # restarts by the engine before an ended workload is crash-looping


@dataclass(frozen=True)
class LiveState:
    """What the engine says about the workload right now."""

    exists: bool
    running: bool
    status: str  # engine words: running, exited, restarting, created, missing ...
    exit_code: int | None = None
    restart_count: int = 0  # restarts the engine made by itself (restart policy, a pod's container)
    oom_killed: bool = False  # the engine says the workload's last end was a kill for lack of memory
    started_at: datetime | None = None
    host_port: int | None = None
    # Where the workload runs now: the engine's name (Docker), the pod's node (Kubernetes), the
    # PVE node (Proxmox); None when the engine cannot tell (no pod scheduled yet).
    node: str | None = None

    @property
    def crash_looping(self) -> bool:
        """Ended again and again: a first restart in progress (an OOM kill the restart policy
        answers) is not a loop yet; the engine's CRASH_LOOP_RESTARTS-th is."""
        ended = self.status == "restarting" or not self.running  # Docker says Running while restarting
        return ended and self.restart_count >= CRASH_LOOP_RESTARTS

    @property
    def restarting_after_an_end(self) -> bool:
        """The engine is starting the workload again by itself, short of a crash loop."""
        return self.status == "restarting" and not self.crash_looping


@dataclass(frozen=True)
class StatsSnapshot:
    """The spec's "Stats snapshot" fields (MB = bytes / 1024^2)."""

    cpu_percent: float
    memory_usage_mb: float
    memory_limit_mb: float
    memory_percent: float
    network_rx_mb: float
    network_tx_mb: float
    disk_read_mb: float
    disk_write_mb: float
    pids: int
    uptime_seconds: float
    running: bool
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ExecResult:
    """What a command run inside a workload did. `exit_code` is None when it was still running
    at the timeout (or when `stop_when` matched): the backend stopped waiting, not the command."""

    exit_code: int | None
    output: bytes  # stdout and stderr interleaved, at most `max_output` bytes
    timed_out: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class LogLine:
    """One line a workload wrote: `stream` is stdout or stderr (a target that cannot tell them
    apart says stdout); `ts` is when the engine recorded it, timezone-aware."""

    ts: datetime
    stream: str
    line: str


@runtime_checkable
class RuntimeBackend(Protocol):
    def create(self, agent, spec: WorkloadSpec) -> Placement:
        """Create and start the workload. Idempotent: if one labelled for this agent
        already exists (a retried job), return its placement instead of a second one."""

    def start(self, agent) -> None: ...

    def stop(self, agent) -> None:
        """Stop gracefully; stopping a stopped or missing workload is not an error."""

    def restart(self, agent) -> None: ...

    def remove(self, agent, *, keep_state: bool = False) -> None:
        """Remove the workload and its state storage; removing a missing one is not an error.
        `keep_state` keeps the storage for the next workload of the same agent (a redeploy)."""

    def inspect(self, agent) -> LiveState: ...

    def stats(self, agent) -> StatsSnapshot:
        """A snapshot read now. Counters are cumulative; `cpu_percent` is a rate, so it is
        measured between two readings: a backend may take it against its own previous reading
        of the workload in this process (the sampler's last tick, the last live read) and
        needs a second, short reading only when it has no recent one."""

    def gateway_endpoint(self, agent) -> tuple[str, int]:
        """(host, port) where the control plane reaches the runtime's gateway."""

    def probe(self) -> str:
        """Reach the engine or target itself (no workload is involved): its version words, for
        health checks. BackendUnreachable when it cannot be reached."""

    def read_state_file(self, agent, path: str) -> bytes | None:
        """A file of the workload's state folder (`path` relative to it), or None when it does
        not exist. WorkloadMissing without a workload."""

    def write_state_file(self, agent, path: str, data: bytes, *, mode: int = 0o600) -> None:
        """Write a file of the workload's state folder, owned by the runtime's user. Used for
        what a runtime reads from files rather than a gateway call (Hermes's `.env`, which it
        re-reads at every turn). WorkloadMissing without a workload."""

    def exec(self, agent, argv: Sequence[str], *, timeout: float, max_output: int,
             stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
        """Run `argv` (a list of words, never a shell string) inside the running workload, as
        the image's user, and wait at most `timeout` seconds for it to exit. `stop_when(output)`
        lets a caller stop waiting early (a login that printed its QR and now waits for a scan);
        a command still running then is left running. WorkloadMissing when there is no workload;
        BackendError when it is not running."""


# -- state files (files, export and migration: docs/api.md "Files, export and migration") ----------


class PathRefused(BackendError):
    """A path that leaves the state folder (`..`, absolute, a symlink pointing out): 400."""


class NotAFile(BackendError):
    """A state path that does not exist, or is not what the operation needs."""


class FileTooLarge(BackendError):
    """A file above the size the caller reads (413)."""


@dataclass(frozen=True)
class FileEntry:
    """One item of a state folder listing (`path` relative to the state folder)."""

    name: str
    path: str
    type: str  # file | dir | link
    size: int
    modified_at: datetime | None


@dataclass(frozen=True)
class StatePath:
    """What a state path is: a folder's entries, or a file's size (its bytes come separately)."""

    path: str
    is_dir: bool
    size: int
    entries: tuple[FileEntry, ...] = ()


@runtime_checkable
class StateFiles(Protocol):
    """The state-folder operations of a backend (Docker today; a target whose API cannot do
    them lacks them, and the files routes answer 409 unsupported)."""

    def stat_path(self, agent, path: str) -> StatePath:
        """A folder (with its direct entries) or a file; NotAFile when missing, PathRefused when
        `path` leaves the state folder."""

    def list_files(self, agent, path: str) -> list[FileEntry]: ...

    def read_file(self, agent, path: str, *, max_bytes: int) -> bytes:
        """The bytes of a file; NotAFile for a folder or a missing file."""

    def write_file(self, agent, path: str, data: bytes) -> None:
        """Write a file (its missing parent folders too), owned by the runtime's user."""

    def delete_file(self, agent, path: str) -> None:
        """Remove a file or a folder with its content; NotAFile when missing."""

    def export_state(self, agent) -> Iterator[bytes]:
        """An uncompressed tar of the state folder, its entries named `state/...`, in chunks."""

    def import_state(self, agent, spec: WorkloadSpec, archive: BinaryIO) -> None:
        """Restore an uncompressed tar of `state/...` entries into the agent's state storage
        before its workload first starts (called by provisioning before `create`)."""


# -- logs (docs/api.md "Logs") ---------------------------------------------------------------------


@runtime_checkable
class WorkloadLogs(Protocol):
    """Reading a workload's output. A target whose API cannot give it lacks this protocol, and
    the logs routes answer 409 unsupported."""

    def logs(self, agent, *, tail: int | None = 200, since: datetime | None = None,
             follow: bool = False) -> Iterator[LogLine]:
        """The workload's output, oldest first: the last `tail` lines (None: all) written at or
        after `since`. With `follow` it goes on yielding new lines as they come until the
        consumer closes the iterator. WorkloadMissing without a workload."""

    def follow_logs(self, agent, *, tail: int | None = 200, since: datetime | None = None) -> AsyncIterator[LogLine]:
        """As `logs(follow=True)`, read on the event loop: the workload is looked up when called
        (WorkloadMissing, BackendUnreachable), its lines come as the async iterator is read,
        until the consumer stops reading or the workload's output ends."""


# -- terminals (docs/edge.md) ----------------------------------------------------------------------


@runtime_checkable
class WorkloadStatsReader(Protocol):
    """A backend whose engine can be read for stats on the event loop, many reads at once
    (the sampler, agents.stats.sampler_async), rather than one thread per read."""

    def stats_reader(
        self, *, connections: int
    ) -> AbstractAsyncContextManager[Callable[[object], Awaitable[StatsSnapshot]]] | None:
        """`async with` it for `read(agent) -> StatsSnapshot` (as stats()) with at most
        `connections` requests at once on the engine; None when this engine is not reached
        that way (the caller calls stats() in a thread)."""


@runtime_checkable
class WorkloadStateReader(Protocol):
    """A backend whose engine can be inspected on the event loop, many workloads at once (the
    monitoring sweep, agents.services.monitoring_engines), rather than one thread per inspect."""

    def state_reader(
        self, *, connections: int
    ) -> AbstractAsyncContextManager[Callable[[object], Awaitable[LiveState]]] | None:
        """`async with` it for `read(agent) -> LiveState` (as inspect()) with at most
        `connections` requests at once on the engine; None when this engine is not reached
        that way (the caller calls inspect() in a thread)."""


class WorkloadNotRunning(BackendError):
    """The workload exists but its process is not running (a terminal needs it running): 409."""


class ExecSession(Protocol):
    """An interactive shell with a TTY inside a workload (WorkloadTerminal.attach_exec), used
    from the event loop. A backend whose client can wait on the loop holds no thread for it; one
    whose client only blocks reads in one thread per session (agents.backends.terminal)."""

    async def read(self) -> bytes:
        """The next output, as it comes (stdout and stderr are one stream on a TTY); b"" once
        the shell ended or the connection to the engine dropped."""

    async def write(self, data: bytes) -> None:
        """Send keystrokes (or pasted text) to the shell's TTY."""

    async def resize(self, cols: int, rows: int) -> None:
        """Set the TTY's size; programs in it get SIGWINCH."""

    async def close(self) -> None:
        """End the shell and every process started from it, and the connection. Idempotent."""


@runtime_checkable
class WorkloadTerminal(Protocol):
    """Opening a shell in a workload. A target whose API cannot run one lacks this protocol, and
    the terminal answers 409 unsupported."""

    async def attach_exec(self, agent, *, cols: int, rows: int) -> ExecSession:
        """The workload's /bin/sh with a TTY of `cols` x `rows`, as the image's user.
        WorkloadMissing without a workload, WorkloadNotRunning when it is not running,
        BackendUnreachable when the engine cannot be reached."""
