"""The Docker backend: agents as containers on the engine at `settings.DOCKER_HOST` (docker-py).

Of the agent it reads only `id`, `container_id`, `container_name`, `gateway_host_port` and
`runtime_family`. The engine is the source of truth for placement: every container carries
the labels `fleet.agent_id`, `fleet.managed=true` and `fleet.host_port`, so a retried job
finds its container and port allocation needs no table of its own.

Each agent's runtime state lives in a named volume mounted at /state (`fleet.agent_id`
labelled too): it outlives restarts and redeploys (`remove(keep_state=True)`) and goes with
the agent (`remove()`).
"""

from __future__ import annotations

import asyncio
import io
import posixpath
import queue
import socket
import struct
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from urllib.parse import urlparse

import docker
from django.conf import settings
from docker import errors as docker_errors
from docker.models.containers import Container
from docker.utils import version_lt

from agents.backends import docker_stats
from agents.backends.base import (
    LABEL_AGENT_ID,
    LABEL_MANAGED,
    STEP_CREATING,
    STEP_PULLING,
    BackendError,
    ExecResult,
    ExecSession,
    LiveState,
    Placement,
    StatsSnapshot,
    WorkloadMissing,
    WorkloadNotRunning,
    WorkloadSpec,
)
from agents.backends.docker_async import speaks_natively
from agents.backends.docker_engine import (
    engine_client,
    engine_errors,
    engine_info,
    engine_refusal,
    image_user,
    state_volume_name,
)
from agents.backends.docker_files import DockerStateFiles
from agents.backends.docker_inspect_async import engine_inspect_reader
from agents.backends.docker_logs import DockerLogs
from agents.backends.docker_state import MISSING, label_port, live_state
from agents.backends.docker_stats_async import engine_stats_reader
from agents.backends.docker_terminal import blocking_engine_session, open_engine_shell
from agents.backends.ports import PORT_LABEL, choose_port, ports_in_use
from agents.backends.terminal import ThreadedExecSession, new_marker, shell_argv
from agents.families import FAMILIES, GATEWAY_BIND_VARIABLE, STATE_PATH

# The variable each runtime reads its gateway's listen port from.
PORT_VARIABLE = {name: family.port_variable for name, family in FAMILIES.items()}

STOP_TIMEOUT = 10  # seconds a runtime gets to exit on TERM before the engine kills it
CREATE_ATTEMPTS = 5  # port races lost before giving up
TWIN_WAIT = 5  # seconds to wait for a concurrent run of the same job to start its container
PORT_RACE_WAIT = 5  # seconds an earlier container waits for a later one on its port to keep it or back off
MB = 1024 * 1024
ONE_SHOT_API = "1.41"  # the first engine API with stats?one-shot=true
FIRST_READ_WINDOW = docker_stats.FIRST_READ_WINDOW
EXEC_SETTLE = 2.0  # seconds to wait for the engine to record an exec whose output has ended

# Each container's last CPU reading in this process, for the CPU % of its next one-shot read.
_cpu_samples = docker_stats.CPU_SAMPLES


def _is_port_clash(error: docker_errors.APIError) -> bool:
    text = str(error.explanation or error).lower()
    return "port is already allocated" in text or "address already in use" in text


def _is_name_clash(error: docker_errors.APIError) -> bool:
    return error.status_code == 409 and "already in use" in str(error.explanation or error).lower()


def _state_path(path: str) -> str:
    """`path` inside the state folder; nothing outside it (no absolute path, no `..`)."""
    joined = posixpath.normpath(posixpath.join(STATE_PATH, path))
    if posixpath.isabs(path) or not joined.startswith(STATE_PATH + "/"):
        raise ValueError(f"{path!r} is not a path inside the state folder.")
    return joined


# Metadata host names resolve to nowhere inside agents. The addresses themselves cannot be
# routed away from inside the container (the images carry no `ip` and run unprivileged): the
# host refuses them (docs/configuration.md, "Agent container hardening").
HOST_GATEWAY_NAME = "host.docker.internal"  # the engine's host, seen from a bridged container
METADATA_HOSTS = ("metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal")


def hardening_options() -> dict:
    """What every agent container runs under, whatever the runtime (security review, defect 8):
    no capabilities (the runtimes run as an unprivileged user and bind unprivileged ports), no
    privilege gain through setuid binaries, a bound on processes, and unless turned off a
    read-only root filesystem: state lives on the /state volume and scratch in a tmpfs /tmp."""
    options = {
        "cap_drop": ["ALL"],
        "cap_add": list(settings.DOCKER_CAP_ADD),
        "security_opt": ["no-new-privileges:true"],
        "pids_limit": settings.DOCKER_PIDS_LIMIT,
        "extra_hosts": {name: "0.0.0.0" for name in METADATA_HOSTS},
    }
    if settings.DOCKER_READ_ONLY_ROOTFS:
        options["read_only"] = True
        options["tmpfs"] = {"/tmp": f"rw,nosuid,nodev,size={settings.DOCKER_TMPFS_MB}m"}
    return options


class DockerBackend(DockerStateFiles, DockerLogs):
    """RuntimeBackend for one Docker engine. `host` and `network_mode` default to the settings
    at call time, so a remote-Docker backend can reuse this class with its own host."""

    def __init__(self, host: str | None = None, network_mode: str | None = None):
        self._host = host
        self._network_mode = network_mode

    @property
    def host(self) -> str:
        return self._host or settings.DOCKER_HOST

    @property
    def host_network(self) -> bool:
        return (self._network_mode or settings.DOCKER_NETWORK_MODE) == "host"

    @property
    def engine_is_local(self) -> bool:
        return urlparse(self.host).scheme in ("unix", "npipe", "")

    @property
    def publish_address(self) -> str:
        """The host address gateway ports are published on: DOCKER_PUBLISH_ADDRESS, else
        loopback when the engine is on this host (the control plane reaches it there and
        nobody else does), else all interfaces (the control plane comes over the network)."""
        return settings.DOCKER_PUBLISH_ADDRESS or ("127.0.0.1" if self.engine_is_local else "0.0.0.0")

    @property
    def gateway_bind(self) -> str:
        """What the runtime's gateway listens on (the images' FLEET_GATEWAY_BIND): on the host
        network its socket is the host's, so loopback where the gateway would be published on
        loopback; inside a bridged container all its interfaces (the port is published)."""
        return "loopback" if self.host_network and self.publish_address == "127.0.0.1" else "lan"

    # -- the protocol -------------------------------------------------------------------

    def create(self, agent, spec: WorkloadSpec) -> Placement:
        """Create and start the container. A container already labelled for the agent is
        returned as it is (a retried job), so a redeploy must `remove` before it creates."""
        client = engine_client(self.host)
        with engine_errors(self.host):
            existing = self._labelled(client, spec.agent_id)
            if existing:
                # The first attempt created the container, perhaps without starting it.
                container = existing[0]
                if container.status in ("created", "exited"):
                    container.start()
                    container.reload()
                return self._placement(client, container)
            for _ in range(CREATE_ATTEMPTS):
                container = self._create_on_free_port(client, spec)
                if container is not None:
                    return self._placement(client, container)
        error = BackendError(f"Could not place the container in {CREATE_ATTEMPTS} attempts (host port races).")
        error.transient = True
        raise error

    def start(self, agent) -> None:
        with engine_errors(self.host):
            self._require(agent).start()

    def stop(self, agent) -> None:
        with engine_errors(self.host):
            container = self._find(agent)
            if container is None:
                return
            try:
                container.stop(timeout=STOP_TIMEOUT)
            except docker_errors.NotFound:
                return  # removed while we were stopping it: stopped enough

    def restart(self, agent) -> None:
        with engine_errors(self.host):
            self._require(agent).restart(timeout=STOP_TIMEOUT)

    def remove(self, agent, *, keep_state: bool = False) -> None:
        """Remove the container, and the state volume unless `keep_state` (a redeploy)."""
        client = engine_client(self.host)
        with engine_errors(self.host):
            # Everything labelled for the agent goes, so a duplicate left by a crashed job
            # cannot outlive the agent.
            containers = {c.id: c for c in self._labelled(client, str(agent.id))}
            recorded = self._find(agent)
            if recorded is not None:
                containers[recorded.id] = recorded
            for container in containers.values():
                try:
                    container.remove(force=True, v=True)
                except docker_errors.NotFound:
                    pass
                except docker_errors.APIError as exc:
                    if exc.status_code != 409:  # 409: removal already in progress
                        raise
            if not keep_state:
                self._remove_state(client, str(agent.id))

    def _remove_state(self, client: docker.DockerClient, agent_id: str) -> None:
        volumes = client.volumes.list(filters={"label": f"{LABEL_AGENT_ID}={agent_id}"})
        for volume in volumes:
            # A container whose removal was already in progress may hold it for a moment.
            deadline = time.monotonic() + TWIN_WAIT
            while True:
                try:
                    volume.remove()
                    break
                except docker_errors.NotFound:
                    break
                except docker_errors.APIError as exc:
                    if exc.status_code != 409 or time.monotonic() >= deadline:
                        raise
                    time.sleep(0.2)

    def inspect(self, agent) -> LiveState:
        with engine_errors(self.host):
            container = self._find(agent)
        if container is None:
            return MISSING
        return live_state(container.attrs, node=engine_info(self.host, engine_client(self.host))["name"])

    def stats(self, agent) -> StatsSnapshot:
        with engine_errors(self.host):
            container = self._require(agent)
            state = container.attrs.get("State") or {}
            running = bool(state.get("Running"))
            cpu = None
            if not running:
                payload = docker_stats.stopped_payload(container.attrs)
            elif version_lt(container.client.api.api_version, ONE_SHOT_API):
                # stream=False waits for a second sample, so precpu_stats holds a real delta.
                payload = container.stats(stream=False)
            else:
                payload, cpu = self._one_shot_stats(container, started=state.get("StartedAt") or "")
        return docker_stats.snapshot_from_stats(
            payload, running=running, started_at=docker_stats.parse_docker_time(state.get("StartedAt")), cpu=cpu
        )

    def _one_shot_stats(self, container: Container, *, started: str) -> tuple[dict, float]:
        """(payload, CPU %) from one-shot reads, which skip the daemon's wait for a second
        sample (two ticks of its 1 s collector; engines since 25.0 read at once, older ones
        still wait for one tick). The CPU % is taken against this process's previous reading
        of the container.

        Without a recent one (this process's first read, a restart, a reading older than the
        cache keeps) a second one-shot read FIRST_READ_WINDOW later gives the delta, rather
        than a two-sample read: about 0.25 s instead of 1-2 s on current engines, and on old
        ones no slower, since there each read waits for the collector's next tick anyway.
        """
        key = docker_stats.reading_key(container.id, started)
        payload = container.stats(stream=False, one_shot=True)
        first, cpu = docker_stats.first_reading(payload, key, at=time.monotonic())
        if first is None or cpu is not None:
            return payload, cpu
        time.sleep(FIRST_READ_WINDOW)
        payload = container.stats(stream=False, one_shot=True)
        return payload, docker_stats.second_reading(first, payload, key, at=time.monotonic())

    def stats_reader(self, *, connections: int):
        """WorkloadStatsReader: reads on the event loop through the engine's socket
        (docker_stats_async); None over Remote Docker's SSH channels, read in threads."""
        return engine_stats_reader(self.host, connections=connections) if speaks_natively(self.host) else None

    def state_reader(self, *, connections: int):
        """WorkloadStateReader: inspects on the event loop through the engine's socket
        (docker_inspect_async); None over Remote Docker's SSH channels, inspected in threads."""
        return engine_inspect_reader(self.host, connections=connections) if speaks_natively(self.host) else None

    def gateway_endpoint(self, agent) -> tuple[str, int]:
        port = agent.gateway_host_port
        if not port:
            port = self.inspect(agent).host_port
        if not port:
            raise WorkloadMissing("The agent has no container with a gateway port.")
        return self._gateway_host(), int(port)

    def probe(self) -> str:
        client = engine_client(self.host)
        with engine_errors(self.host):
            version = client.version()
        return f"Docker {version.get('Version', '?')} (API {version.get('ApiVersion', '?')})"

    def read_state_file(self, agent, path: str) -> bytes | None:
        """The bytes of `path` (relative to the state folder) in the agent's container, or None."""
        target = _state_path(path)
        with engine_errors(self.host):
            container = self._require(agent)
            try:
                chunks, _ = container.get_archive(target)
            except docker_errors.NotFound:
                return None
            with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
                member = archive.extractfile(archive.getmembers()[0])
                return member.read() if member is not None else None

    def write_state_file(self, agent, path: str, data: bytes, *, mode: int = 0o600) -> None:
        """Write `path` (relative to the state folder) in the agent's container, running or not,
        owned by the image's user (only that user may read it)."""
        target = _state_path(path)
        with engine_errors(self.host):
            container = self._require(agent)
            uid, gid = image_user(container.attrs)
            buffer = io.BytesIO()
            # PAX, for a modification time to the nanosecond: runtimes that re-read a file when its
            # (mtime, size) changes (Hermes's config.yaml) must see two writes in one second.
            with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
                info = tarfile.TarInfo(posixpath.basename(target))
                info.size, info.mode, info.uid, info.gid, info.mtime = len(data), mode, uid, gid, time.time()
                archive.addfile(info, io.BytesIO(data))
            if not container.put_archive(posixpath.dirname(target), buffer.getvalue()):
                raise BackendError(f"The Docker engine refused to write {target}.")

    def exec(self, agent, argv: Sequence[str], *, timeout: float, max_output: int,
             stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
        argv = [str(word) for word in argv]
        if not argv:
            raise BackendError("Nothing to run: the command is empty.")
        client = engine_client(self.host)
        with engine_errors(self.host):
            container = self._require(agent)
            if container.status != "running":
                raise BackendError(f"The agent's container is {container.status}, not running.")
            return container_exec(client.api, container.id, argv, timeout=timeout, max_output=max_output,
                                  stop_when=stop_when)

    async def attach_exec(self, agent, *, cols: int, rows: int) -> ExecSession:
        """WorkloadTerminal: the workload's shell with a TTY (agents.backends.terminal). An engine
        on a socket is spoken to on the event loop without a thread (docker_terminal); over
        Remote Docker's SSH channels docker-py reads it in a thread per session."""
        if speaks_natively(self.host):
            return await open_engine_shell(self.host, agent, cols=cols, rows=rows)
        return await asyncio.to_thread(self._attach_blocking, agent, cols, rows)

    def _attach_blocking(self, agent, cols: int, rows: int) -> ThreadedExecSession:
        api = engine_client(self.host).api
        marker = new_marker()
        with engine_errors(self.host):
            container = self._require(agent)
            if container.status != "running":
                raise WorkloadNotRunning(f"The agent's container is {container.status}, not running.")
            exec_id = api.exec_create(container.id, shell_argv(marker), stdin=True, tty=True)["Id"]
            reader, sock = _exec_stream(api, exec_id, tty=True)
            api.exec_resize(exec_id, height=rows, width=cols)
        return blocking_engine_session(api, container.id, exec_id, marker=marker, reader=reader, sock=sock)

    # -- lookup -------------------------------------------------------------------------

    def _labelled(self, client: docker.DockerClient, agent_id: str) -> list[Container]:
        # ignore_removed: a container removed between listing and inspecting is simply gone.
        return client.containers.list(
            all=True, filters={"label": f"{LABEL_AGENT_ID}={agent_id}"}, ignore_removed=True
        )

    def _find(self, agent) -> Container | None:
        """The agent's container: by the recorded id, else by label (a job that died before
        recording the id, or a stop that arrives while the agent is still deploying)."""
        client = engine_client(self.host)
        if agent.container_id:
            try:
                return client.containers.get(agent.container_id)
            except docker_errors.NotFound:
                pass
        found = self._labelled(client, str(agent.id))
        return found[0] if found else None

    def _require(self, agent) -> Container:
        container = self._find(agent)
        if container is None:
            raise WorkloadMissing("The agent's container no longer exists on the Docker engine.")
        return container

    def _gateway_host(self) -> str:
        if self.engine_is_local:
            return "127.0.0.1"
        return urlparse(self.host).hostname or "127.0.0.1"

    def _placement(self, client: docker.DockerClient, container: Container) -> Placement:
        return Placement(
            container_id=container.id,
            container_name=container.name,
            node=engine_info(self.host, client)["name"],
            host_port=label_port(container.attrs),
        )

    # -- creation -----------------------------------------------------------------------

    def _create_on_free_port(self, client: docker.DockerClient, spec: WorkloadSpec) -> Container | None:
        """Create and start the container on a free port; None when another deploy took the
        port first (the caller tries again with a fresh one)."""
        taken = ports_in_use(client.api.containers(all=True))
        port = choose_port(
            taken, settings.DOCKER_HOST_PORT_RANGE, probe_local=self.host_network and self.engine_is_local
        )
        try:
            container = self._create_container(client, spec, port)
        except docker_errors.APIError as exc:
            if not _is_name_clash(exc):
                raise
            return self._await_twin(client, spec)
        if self._lost_port_race(client, container, port):
            container.remove(force=True)
            return None
        try:
            container.start()
        except docker_errors.APIError as exc:
            # A container that never ran is dropped, so a retried job starts afresh.
            container.remove(force=True)
            if _is_port_clash(exc):
                return None  # bridge mode: something outside fleet holds the port
            raise
        container.reload()
        return container

    def _await_twin(self, client: docker.DockerClient, spec: WorkloadSpec) -> Container | None:
        """After a name clash: the container a concurrent run of the same job is creating,
        once it has left the `created` state; None when it vanished (the caller tries again).
        The engine reserves the name before the container shows in lists, hence the wait."""
        deadline = time.monotonic() + TWIN_WAIT
        while True:
            try:
                twin = client.containers.get(spec.name)
            except docker_errors.NotFound:
                twin = None
            if twin is not None and twin.labels.get(LABEL_AGENT_ID) != spec.agent_id:
                raise BackendError(f"A container named {spec.name!r} already exists for something else.")
            if twin is not None and twin.status != "created":
                return twin
            if time.monotonic() >= deadline:
                return twin
            time.sleep(0.1)

    def _create_container(self, client: docker.DockerClient, spec: WorkloadSpec, port: int) -> Container:
        options = self._container_options(client, spec, port)
        self._ensure_state_volume(client, spec)
        try:
            return client.containers.create(**options)
        except docker_errors.ImageNotFound:
            self._pull(client, spec)
            spec.on_step(STEP_CREATING)
            return client.containers.create(**options)
        except docker_errors.NotFound as exc:
            # Not our container missing: something the container needs (a network, a volume).
            raise BackendError(f"The Docker engine could not create the container: {exc.explanation}") from exc

    def _ensure_state_volume(self, client: docker.DockerClient, spec: WorkloadSpec) -> None:
        """The agent's state volume, created on first deploy; an existing one (a redeploy, a
        retried job) is kept as it is. The engine fills a new one from the image's /state."""
        labels = {**settings.DOCKER_CONTAINER_LABELS, LABEL_AGENT_ID: spec.agent_id, LABEL_MANAGED: "true"}
        client.volumes.create(name=state_volume_name(spec.agent_id), labels=labels)

    def _pull(self, client: docker.DockerClient, spec: WorkloadSpec) -> None:
        image = spec.image
        spec.on_step(STEP_PULLING)
        try:
            client.images.pull(image)
        except docker_errors.APIError as exc:
            raise engine_refusal(exc, what=f"could not pull {image}") from exc

    def _container_options(self, client: docker.DockerClient, spec: WorkloadSpec, port: int) -> dict:
        variable = PORT_VARIABLE.get(spec.runtime_family)
        if variable is None:
            raise BackendError(f"The Docker backend does not know the runtime family {spec.runtime_family!r}.")
        # On the host network the runtime must listen on the allocated port itself.
        listen_port = port if self.host_network else spec.gateway_port
        # The engine refuses a CPU limit above its own count; such a limit means "all of them".
        vcpu = min(spec.vcpu, engine_info(self.host, client)["cpus"])
        options = {
            "image": spec.image,
            "name": spec.name,
            "environment": {**spec.env, variable: str(listen_port), GATEWAY_BIND_VARIABLE: self.gateway_bind},
            "labels": {
                **settings.DOCKER_CONTAINER_LABELS,
                **spec.labels,
                LABEL_AGENT_ID: spec.agent_id,
                LABEL_MANAGED: "true",
                PORT_LABEL: str(port),
            },
            "volumes": {state_volume_name(spec.agent_id): {"bind": STATE_PATH, "mode": "rw"}},
            "nano_cpus": int(vcpu * 1_000_000_000),
            "mem_limit": spec.ram_mb * MB,
            "restart_policy": {"Name": "unless-stopped"},
            "detach": True,
            **hardening_options(),
        }
        if self.host_network:
            options["network_mode"] = "host"
        else:
            options["ports"] = {f"{spec.gateway_port}/tcp": (self.publish_address, port)}
            # The default FLEET_INTERNAL_URL of a bridged workload names its host by this name.
            options["extra_hosts"] = {**options["extra_hosts"], HOST_GATEWAY_NAME: "host-gateway"}
        return options

    def _lost_port_race(self, client: docker.DockerClient, container: Container, port: int) -> bool:
        """Whether another fleet container keeps the same port. The engine orders creations: of
        two clashing deploys the later one backs off when it sees the earlier. It may not see
        it: the engine stamps a creation's time before the container shows in its lists, so the
        later one can look while the earlier is still being created, find nobody and keep the
        port. The earlier one, seeing a later rival, therefore waits for it to back off (it is
        removed) or to keep the port (it is started), and backs off itself in the second case."""
        rivals = [
            summary["Id"]
            for summary in client.api.containers(all=True, filters={"label": f"{PORT_LABEL}={port}"})
            if summary["Id"] != container.id
        ]
        mine = (docker_stats.docker_time_ns(container.attrs["Created"]), container.id)
        for rival_id in rivals:
            try:
                rival = client.api.inspect_container(rival_id)
            except docker_errors.NotFound:
                continue  # a rival that backed off already
            if (docker_stats.docker_time_ns(rival["Created"]), rival["Id"]) < mine:
                return True
            if self._later_rival_keeps(client, rival_id):
                return True
        return False

    @staticmethod
    def _later_rival_keeps(client: docker.DockerClient, rival_id: str) -> bool:
        """Whether a container created after this one keeps the port: it leaves the `created`
        state (started); it is gone when it backed off. Waiting only ever goes from an earlier
        container to a later one, so two deploys never wait for each other. Past PORT_RACE_WAIT
        the rival is taken to keep it: backing off is always safe (the caller tries a new port)."""
        deadline = time.monotonic() + PORT_RACE_WAIT
        while True:
            try:
                state = client.api.inspect_container(rival_id)["State"]
            except docker_errors.NotFound:
                return False
            if state.get("Status") != "created" or time.monotonic() >= deadline:
                return True
            time.sleep(0.05)


def container_exec(api, container_id: str, argv: Sequence[str], *, timeout: float, max_output: int,
                   stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
    """Run `argv` in a running container and collect its output (docker-py's exec_run reads the
    socket under the answer's buffered reader and can lose a fast command's whole output)."""
    # A list is passed to the engine as the process's argv: no shell sees it.
    exec_id = api.exec_create(container_id, list(argv), stdout=True, stderr=True, stdin=False, tty=False)["Id"]
    reader, sock = _exec_stream(api, exec_id)
    output, truncated, ended = _read_exec(reader, sock, timeout=timeout, max_output=max_output, stop_when=stop_when)
    state = api.exec_inspect(exec_id)
    # The stream closes as the process exits; the engine may record the exit a moment later.
    settle = time.monotonic() + EXEC_SETTLE
    while ended and state.get("Running") and time.monotonic() < settle:
        time.sleep(0.05)
        state = api.exec_inspect(exec_id)
    if state.get("Running"):
        return ExecResult(exit_code=None, output=output, timed_out=ended is None, truncated=truncated)
    return ExecResult(exit_code=state.get("ExitCode"), output=output, truncated=truncated)


def _exec_stream(api, exec_id: str, *, tty: bool = False):
    """Start an exec attached (docker-py's exec_start with socket=True, minus its socket-only
    reading): (the buffered reader the answer's headers were parsed from, the socket under it).
    Output must be read through that reader: a fast command's first frames may arrive in the
    same packet as the headers (over SSH channels they often do) and sit in its buffer."""
    response = api._post_json(api._url("/exec/{0}/start", exec_id), headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                              data={"Tty": tty, "Detach": False}, stream=True)
    sock = api._get_raw_response_socket(response)  # raises the engine's refusal
    # The client's API_TIMEOUT is for one engine call; a command quiet for longer (a CLI waiting
    # on its runtime) is not a dead engine. The caller's own timeout ends the wait (_read_exec).
    api._disable_socket_timeout(sock)
    return response.raw._fp.fp, sock


def _exec_frames(reader) -> Iterator[bytes]:
    """The payloads of a multiplexed stream's frames (8-byte header: stream, 3 zero bytes, size)."""
    while True:
        header = reader.read(8)
        if len(header) < 8:
            return
        size = struct.unpack(">xxxxL", header)[0]
        data = reader.read(size) if size else b""
        if data:
            yield data
        if len(data) < size:
            return


def _read_exec(reader, sock, *, timeout: float, max_output: int,
               stop_when: Callable[[bytes], bool] | None) -> tuple[bytes, bool, bool | None]:
    """(output, truncated, ended) of an exec's multiplexed stream; `ended` is True when the
    stream closed (the process exited), False when `stop_when` matched, None at the timeout.
    Reading blocks without a timeout, so it runs in a thread, which a shutdown of the socket
    ends."""
    chunks: queue.Queue = queue.Queue()

    def pump():
        try:
            for data in _exec_frames(reader):
                chunks.put(data)
        except (OSError, ValueError):
            pass  # shut down under us once the caller stopped waiting
        finally:
            chunks.put(None)

    threading.Thread(target=pump, daemon=True, name="fleet-exec-reader").start()
    deadline = time.monotonic() + timeout
    output, truncated, ended = bytearray(), False, None
    try:
        while True:
            try:
                data = chunks.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                break
            if data is None:
                ended = True
                break
            room = max(max_output - len(output), 0)
            truncated = truncated or len(data) > room
            output += data[:room]
            if stop_when is not None and stop_when(bytes(output)):
                ended = False
                break
    finally:
        raw = getattr(sock, "_sock", sock)
        with suppress(OSError):
            raw.shutdown(socket.SHUT_RDWR)
        with suppress(OSError):
            sock.close()
    return bytes(output), truncated, ended
