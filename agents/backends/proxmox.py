"""The Proxmox VE backend (experimental): an agent is an LXC container on `PROXMOX_NODE`, created
from `PROXMOX_TEMPLATE` through the API (proxmoxer, API token), with `cores`, `memory` and a
root filesystem of `disk_gb` on `PROXMOX_STORAGE`. Every change is a PVE task whose UPID is
waited on until it ends, and a task that ends in error is reported with PVE's own words.

The container's hostname is the workload name and its description carries `fleet.agent_id`, so a
retried job finds the container it made. The runtime's environment is the container's `env`
(PVE 9). The root filesystem is the agent's state: a redeploy (`remove(keep_state=True)`) stops
the container and keeps it, and `create` applies the current resources and environment to it
and starts it again. There is no exec API for containers: exec, state files and logs are not
offered on this target.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from urllib.parse import urlparse

import requests
from django.conf import settings
from proxmoxer import ProxmoxAPI
from proxmoxer.core import AuthenticationError, ResourceException

from agents.backends.base import (
    GATEWAY_PORT,
    LABEL_AGENT_ID,
    BackendError,
    BackendUnreachable,
    ExecResult,
    LiveState,
    Placement,
    StatsSnapshot,
    WorkloadMissing,
    WorkloadSpec,
)

API_TIMEOUT = 15
POLL_SECONDS = 0.2
STOP_TIMEOUT = 10  # seconds a clean shutdown may take before PVE stops the container hard
MB = 1024 * 1024
GB = 1024 * MB
_SIZE_UNITS = {"": 1, "K": 1024, "M": MB, "G": GB, "T": 1024 * GB}
TAG = "fleet-agent"

_client: tuple[tuple, ProxmoxAPI] | None = None
_client_lock = threading.Lock()


def verify_option() -> bool | str:
    """PROXMOX_VERIFY_TLS: "true" / "false", or the path of a CA bundle to verify against."""
    value = (settings.PROXMOX_VERIFY_TLS or "true").strip()
    if value.lower() in ("true", "1", "yes", "on"):
        return True
    if value.lower() in ("false", "0", "no", "off"):
        return False
    return value


def proxmox_client() -> ProxmoxAPI:
    """One client per configuration (rebuilt when the settings change, as in tests)."""
    global _client
    key = (settings.PROXMOX_URL, settings.PROXMOX_TOKEN_ID, settings.PROXMOX_TOKEN_SECRET, settings.PROXMOX_VERIFY_TLS)
    with _client_lock:
        if _client is not None and _client[0] == key:
            return _client[1]
        url = urlparse(settings.PROXMOX_URL)
        user, _, token_name = settings.PROXMOX_TOKEN_ID.partition("!")
        if not url.hostname or not token_name:
            raise BackendError("Proxmox needs PROXMOX_URL (https://host:8006) and PROXMOX_TOKEN_ID (user@realm!name).")
        api = ProxmoxAPI(url.hostname, port=url.port or 8006, user=user, token_name=token_name,
                         token_value=settings.PROXMOX_TOKEN_SECRET, verify_ssl=verify_option(), timeout=API_TIMEOUT)
        _client = (key, api)
        return api


@contextmanager
def api_errors():
    try:
        yield
    except ResourceException as exc:
        text = f"{exc.status_message} {exc.content}".strip()
        if "does not exist" in text:
            raise WorkloadMissing(f"The agent's container no longer exists on Proxmox: {exc.content}") from exc
        error = BackendError(f"Proxmox refused the request: {exc.status_code} {text}")
        error.transient = exc.status_code >= 500 and "locked" in text  # a lock passes; other 500s are answers
        raise error from exc
    except AuthenticationError as exc:
        raise BackendError(f"Proxmox refused the API token: {exc}") from exc
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise BackendUnreachable(f"The Proxmox API at {settings.PROXMOX_URL} cannot be reached.") from exc


def template_for(runtime_family: str) -> str:
    """PROXMOX_TEMPLATE: one volume for every runtime, or `openclaw=<volume>,hermes=<volume>`."""
    value = settings.PROXMOX_TEMPLATE.strip()
    if "=" not in value:
        template = value
    else:
        pairs = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
        template = pairs.get(runtime_family, "").strip()
    if not template:
        raise BackendError(f"PROXMOX_TEMPLATE names no template for the {runtime_family} runtime.")
    return template


def rootfs_bytes(rootfs: str) -> int | None:
    """The `size=` of an LXC rootfs option (`local-lvm:vm-100-disk-0,size=12G`) in bytes, None
    when it names none."""
    for part in rootfs.split(",")[1:]:
        key, _, value = part.partition("=")
        if key.strip() == "size":
            value = value.strip().upper()
            unit = value[-1] if value and value[-1] in "KMGT" else ""
            try:
                return int(float(value[: len(value) - len(unit)]) * _SIZE_UNITS[unit])
            except ValueError:
                return None
    return None


def environment(env: dict[str, str]) -> str:
    """The LXC `env` option: NUL-separated KEY=value pairs (PVE refuses control characters)."""
    return "\0".join(f"{key}={value}" for key, value in sorted(env.items()))


class ProxmoxBackend:
    """RuntimeBackend for the Proxmox VE node of the settings."""

    def __init__(self):
        self.node_name = settings.PROXMOX_NODE

    @property
    def node(self):
        return proxmox_client().nodes(self.node_name)

    # -- the protocol -------------------------------------------------------------------

    def create(self, agent, spec: WorkloadSpec) -> Placement:
        with api_errors():
            vmid = self._find_vmid(spec.agent_id, spec.name)
            resources = self._resources(spec)
            if vmid is None:
                vmid = int(proxmox_client().cluster.nextid.get())
                upid = self.node.lxc.post(
                    vmid=vmid, ostemplate=template_for(spec.runtime_family), hostname=spec.name,
                    storage=settings.PROXMOX_STORAGE, rootfs=f"{settings.PROXMOX_STORAGE}:{int(spec.disk_gb)}",
                    unprivileged=1, tags=TAG, description=f"{LABEL_AGENT_ID}={spec.agent_id}",
                    onboot=1, start=1, **resources)
                self._wait(upid, f"create the container {vmid}")
            else:
                # An existing container: a retried job, or a redeploy that kept the state.
                self.node.lxc(vmid).config.put(**resources)
                self._grow_rootfs(vmid, int(spec.disk_gb))
                if self._status(vmid).get("status") != "running":
                    self._wait(self.node.lxc(vmid).status.start.post(), f"start the container {vmid}")
            return Placement(container_id=str(vmid), container_name=spec.name, node=self.node_name,
                             host_port=GATEWAY_PORT)

    def start(self, agent) -> None:
        vmid = self._require(agent)
        with api_errors():
            if self._status(vmid).get("status") != "running":
                self._wait(self.node.lxc(vmid).status.start.post(), f"start the container {vmid}")

    def stop(self, agent) -> None:
        vmid = self._vmid(agent)
        if vmid is None:
            return
        try:
            with api_errors():
                if self._status(vmid).get("status") == "running":
                    upid = self.node.lxc(vmid).status.shutdown.post(timeout=STOP_TIMEOUT, forceStop=1)
                    self._wait(upid, f"stop the container {vmid}")
        except WorkloadMissing:
            return

    def restart(self, agent) -> None:
        vmid = self._require(agent)
        with api_errors():
            if self._status(vmid).get("status") == "running":
                upid = self.node.lxc(vmid).status.reboot.post(timeout=STOP_TIMEOUT)
                self._wait(upid, f"restart the container {vmid}")
            else:
                self._wait(self.node.lxc(vmid).status.start.post(), f"start the container {vmid}")

    def remove(self, agent, *, keep_state: bool = False) -> None:
        """Destroy the container with its volumes; with `keep_state` stop it and keep it, since
        its root filesystem is the agent's state (`create` takes it up again)."""
        vmid = self._vmid(agent)
        if vmid is None:
            return
        try:
            with api_errors():
                if self._status(vmid).get("status") == "running":
                    self._wait(self.node.lxc(vmid).status.stop.post(), f"stop the container {vmid}")
                if keep_state:
                    return
                upid = self.node.lxc(vmid).delete(purge=1, **{"destroy-unreferenced-disks": 1})
                self._wait(upid, f"destroy the container {vmid}")
        except WorkloadMissing:
            return

    def inspect(self, agent) -> LiveState:
        vmid = self._vmid(agent)
        if vmid is None:
            return LiveState(exists=False, running=False, status="missing")
        try:
            with api_errors():
                status = self._status(vmid)
        except WorkloadMissing:
            return LiveState(exists=False, running=False, status="missing")
        running = status.get("status") == "running"
        uptime = int(status.get("uptime") or 0)
        started = datetime.now(UTC) - timedelta(seconds=uptime) if running and uptime else None
        return LiveState(exists=True, running=running, status="running" if running else "exited",
                         started_at=started, host_port=GATEWAY_PORT, node=self.node_name)

    def stats(self, agent) -> StatsSnapshot:
        """status/current: `cpu` is the share of the container's cores in use (x cores x 100 =
        percent of one core, as on Docker); mem/maxmem, netin/netout, diskread/diskwrite are
        bytes (cumulative counters for the last four); PVE gives no process count (pids 0)."""
        vmid = self._require(agent)
        with api_errors():
            status = self._status(vmid)
        running = status.get("status") == "running"
        cores = float(status.get("cpus") or 1)
        memory, limit = float(status.get("mem") or 0), float(status.get("maxmem") or 0)
        return StatsSnapshot(
            cpu_percent=round(float(status.get("cpu") or 0) * cores * 100, 2) if running else 0.0,
            memory_usage_mb=round(memory / MB, 2),
            memory_limit_mb=round(limit / MB, 2),
            memory_percent=round(memory / limit * 100, 2) if limit else 0.0,
            network_rx_mb=round(float(status.get("netin") or 0) / MB, 4),
            network_tx_mb=round(float(status.get("netout") or 0) / MB, 4),
            disk_read_mb=round(float(status.get("diskread") or 0) / MB, 4),
            disk_write_mb=round(float(status.get("diskwrite") or 0) / MB, 4),
            pids=0,
            uptime_seconds=float(status.get("uptime") or 0) if running else 0.0,
            running=running,
        )

    def gateway_endpoint(self, agent) -> tuple[str, int]:
        """The container's first IPv4 address (else IPv6) other than loopback, from its interfaces."""
        vmid = self._require(agent)
        with api_errors():
            interfaces = self.node.lxc(vmid).interfaces.get() or []
        for family in ("inet", "inet6"):
            for interface in interfaces:
                if interface.get("name") == "lo":
                    continue
                for address in interface.get("ip-addresses") or []:
                    if address.get("ip-address-type") == family and address.get("ip-address"):
                        return address["ip-address"], GATEWAY_PORT
        raise WorkloadMissing("The agent's container has no network address yet (is it running?).")

    def probe(self) -> str:
        with api_errors():
            version = proxmox_client().version.get()
        return f"Proxmox VE {version.get('version', '?')} (release {version.get('release', '?')})"

    def read_state_file(self, agent, path: str) -> bytes | None:
        raise BackendError("Proxmox offers no API to read files inside a container.")

    def write_state_file(self, agent, path: str, data: bytes, *, mode: int = 0o600) -> None:
        raise BackendError("Proxmox offers no API to write files inside a container.")

    def exec(self, agent, argv: Sequence[str], *, timeout: float, max_output: int,
             stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
        raise BackendError("Proxmox offers no API to run commands inside a container.")

    # -- helpers ------------------------------------------------------------------------

    def _resources(self, spec: WorkloadSpec) -> dict:
        return {
            "cores": max(1, math.ceil(spec.vcpu)),
            "cpulimit": round(float(spec.vcpu), 2),  # a fraction of a core is a limit, cores are whole
            "memory": int(spec.ram_mb),
            "swap": 0,
            "net0": settings.PROXMOX_NETWORK,
            "env": environment(spec.env),
        }

    def _grow_rootfs(self, vmid: int, disk_gb: int) -> None:
        """Resize the root filesystem (the agent's state) up to `disk_gb` when it grew; PVE
        cannot shrink one, which the registry declares so a resource change refuses it first."""
        rootfs = (self.node.lxc(vmid).config.get() or {}).get("rootfs") or ""
        current = rootfs_bytes(rootfs)
        if current is None or disk_gb * GB <= current:
            return
        upid = self.node.lxc(vmid).resize.put(disk="rootfs", size=f"{disk_gb}G")
        self._wait(upid, f"grow the root filesystem of the container {vmid} to {disk_gb} GB")

    def _status(self, vmid: int) -> dict:
        return self.node.lxc(vmid).status.current.get() or {}

    def _wait(self, upid: str, what: str) -> None:
        """Wait for the task to end; BackendError with PVE's exit status when it failed."""
        deadline = time.monotonic() + float(settings.PROXMOX_TASK_TIMEOUT_SECONDS)
        while True:
            task = self.node.tasks(upid).status.get() or {}
            if task.get("status") == "stopped":
                if task.get("exitstatus") != "OK":
                    raise BackendError(f"Proxmox could not {what}: {task.get('exitstatus') or 'unknown error'}")
                return
            if time.monotonic() >= deadline:
                error = BackendError(f"Proxmox did not {what} within {settings.PROXMOX_TASK_TIMEOUT_SECONDS:g} s.")
                error.transient = True
                raise error
            time.sleep(POLL_SECONDS)

    def _find_vmid(self, agent_id: str, hostname: str) -> int | None:
        """The container made for this agent (hostname and description both match)."""
        for entry in self.node.lxc.get() or []:
            if entry.get("name") != hostname:
                continue
            vmid = int(entry["vmid"])
            description = (self.node.lxc(vmid).config.get() or {}).get("description") or ""
            if f"{LABEL_AGENT_ID}={agent_id}" in description:
                return vmid
        return None

    def _vmid(self, agent) -> int | None:
        if str(agent.container_id).isdigit():
            return int(agent.container_id)
        name = agent.container_name or f"fleet-agent-{uuid.UUID(str(agent.id)).hex[:12]}"
        with api_errors():
            return self._find_vmid(str(agent.id), name)

    def _require(self, agent) -> int:
        vmid = self._vmid(agent)
        if vmid is None:
            raise WorkloadMissing("The agent has no container on Proxmox.")
        return vmid
