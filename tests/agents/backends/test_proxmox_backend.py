"""The Proxmox backend through proxmoxer (API token, TLS verified against the fake's CA) against
fakepve on loopback: the LXC container's config, lifecycle through tasks, stats from
status/current, the gateway at the container's address, an unreachable API, and nemoclaw
refused for this target."""

from __future__ import annotations

import uuid
from dataclasses import replace
from urllib.parse import parse_qs

import pytest

from agents.backends import registry
from agents.backends.base import BackendError, BackendUnreachable, WorkloadMissing
from agents.backends.proxmox import ProxmoxBackend, rootfs_bytes
from tests.agents.backends.support import FakeAgent, spec_for

TOKEN_ID, TOKEN_SECRET = "fleet@pve!agents", "0b5e4f7e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def pve(fakepve, fakepve_cafile, settings):
    fakepve.apitokens[TOKEN_ID] = TOKEN_SECRET
    settings.PROXMOX_URL = fakepve.url
    settings.PROXMOX_TOKEN_ID = TOKEN_ID
    settings.PROXMOX_TOKEN_SECRET = TOKEN_SECRET
    settings.PROXMOX_VERIFY_TLS = fakepve_cafile
    settings.PROXMOX_NODE = "pve1"
    settings.PROXMOX_STORAGE = "local-lvm"
    settings.PROXMOX_TEMPLATE = "openclaw=local:vztmpl/fleet-openclaw.tar.zst,hermes=local:vztmpl/fleet-hermes.tar.zst"
    return fakepve


def deploy(backend, **overrides):
    agent = FakeAgent(execution_target_id="proxmox")
    spec = spec_for(agent, name=f"fleet-agent-{uuid.UUID(agent.id).hex[:12]}", vcpu=1.5, ram_mb=2048, disk_gb=12,
                    env={"OPENCLAW_GATEWAY_TOKEN": "gw-token-1", "FLEET_USAGE_TOKEN": "usage-token-1"}, **overrides)
    return agent.place(backend.create(agent, spec)), spec


def test_create_makes_a_started_lxc_container_from_the_template_with_the_agents_resources(pve):
    backend = registry.backend_for_target("proxmox")
    assert isinstance(backend, ProxmoxBackend)
    agent, spec = deploy(backend)
    ct = pve.ct(int(agent.container_id))
    assert ct.status == "running" and ct.node == "pve1" and agent.container_name == spec.name
    assert ct.config["hostname"] == spec.name
    assert (ct.config["cores"], float(ct.config["cpulimit"]), ct.config["memory"]) == (2, 1.5, 2048)
    assert ct.config["rootfs"].startswith("local-lvm:") and "size=12G" in ct.config["rootfs"]
    assert f"fleet.agent_id={agent.id}" in ct.config["description"]
    assert "OPENCLAW_GATEWAY_TOKEN=gw-token-1" in ct.config["env"].split("\0")
    assert agent.gateway_host_port == 18789
    created = [r for r in pve.requests if r[0] == "POST" and r[1].endswith("/nodes/pve1/lxc")]
    assert len(created) == 1
    assert parse_qs(created[0][2].decode())["ostemplate"] == ["local:vztmpl/fleet-openclaw.tar.zst"]

    # A retried job finds its container instead of making a second one.
    assert backend.create(agent, spec).container_id == agent.container_id
    assert len([r for r in pve.requests if r[0] == "POST" and r[1].endswith("/nodes/pve1/lxc")]) == 1


def test_lifecycle_goes_through_the_api_and_waits_for_each_task(pve):
    backend = ProxmoxBackend()
    agent, _ = deploy(backend)
    ct = pve.ct(int(agent.container_id))
    assert backend.inspect(agent).node == "pve1" == ct.node  # the PVE node it runs on
    backend.stop(agent)
    assert ct.status == "stopped" and not backend.inspect(agent).running
    backend.start(agent)
    assert ct.status == "running" and backend.inspect(agent).running
    backend.restart(agent)
    assert ct.status == "running"
    tasks = [task.get("type") for task in pve.tasks.values()] if isinstance(pve.tasks, dict) else []
    assert {"vzcreate", "vzshutdown", "vzstart", "vzreboot"} <= set(tasks)

    backend.remove(agent, keep_state=True)  # a redeploy keeps the container: its rootfs is the state
    assert pve.ct(int(agent.container_id)).status == "stopped"
    agent.container_id = ""
    placement = backend.create(agent, spec_for(agent, name=agent.container_name, ram_mb=1024))
    assert placement.container_id == str(ct.vmid) and ct.status == "running" and ct.config["memory"] == 1024

    backend.remove(agent)
    assert pve.ct(ct.vmid) is None
    assert not backend.inspect(agent).exists
    backend.stop(agent)  # stopping or removing what is gone is not an error
    backend.remove(agent)
    with pytest.raises(WorkloadMissing):
        backend.start(agent)


def test_a_redeploy_with_a_bigger_disk_grows_the_root_filesystem_and_never_shrinks_it(pve):
    backend = ProxmoxBackend()
    agent, spec = deploy(backend)  # 12 GB
    ct = pve.ct(int(agent.container_id))

    def redeploy(disk_gb):
        backend.remove(agent, keep_state=True)
        agent.container_id = ""
        agent.place(backend.create(agent, replace(spec, disk_gb=disk_gb)))

    redeploy(20)
    assert "size=20G" in ct.config["rootfs"] and ct.status == "running"
    resized = [r for r in pve.requests if r[0] == "PUT" and r[1].endswith(f"/lxc/{ct.vmid}/resize")]
    assert [parse_qs(r[2].decode()) for r in resized] == [{"disk": ["rootfs"], "size": ["20G"]}]
    assert "resize" in {task.get("type") for task in pve.tasks.values()}  # a task, waited for

    redeploy(20)  # the same size: nothing to ask
    redeploy(8)  # smaller: a resource change refuses it first; the backend never asks PVE to shrink
    assert len([r for r in pve.requests if r[0] == "PUT" and r[1].endswith(f"/lxc/{ct.vmid}/resize")]) == 1
    assert "size=20G" in ct.config["rootfs"]
    backend.remove(agent)


@pytest.mark.parametrize(("rootfs", "size"), [
    ("local-lvm:vm-100-disk-0,size=12G", 12 * 1024 ** 3), ("local:100/vm-100-disk-0.raw,size=512M", 512 * 1024 ** 2),
    ("pool:subvol-100-disk-0,mountoptions=noatime,size=1T", 1024 ** 4), ("local-lvm:vm-100-disk-0", None),
    ("local-lvm:vm-100-disk-0,size=huge", None),
])
def test_the_root_filesystem_size_is_read_from_its_option(rootfs, size):
    assert rootfs_bytes(rootfs) == size


def test_stats_come_from_status_current(pve):
    backend = ProxmoxBackend()
    agent, _ = deploy(backend)
    pve.ct(int(agent.container_id)).stats.update({
        "cpu": 0.25, "mem": 512 * 1024 * 1024, "netin": 3 * 1024 * 1024, "netout": 1024 * 1024,
        "diskread": 8 * 1024 * 1024, "diskwrite": 2 * 1024 * 1024, "uptime": 120})
    stats = backend.stats(agent)
    assert stats.running and stats.cpu_percent == 50.0  # a quarter of its 2 cores = half of one core
    assert (stats.memory_usage_mb, stats.memory_limit_mb, stats.memory_percent) == (512.0, 2048.0, 25.0)
    assert (stats.network_rx_mb, stats.network_tx_mb) == (3.0, 1.0)
    assert (stats.disk_read_mb, stats.disk_write_mb) == (8.0, 2.0)
    assert stats.uptime_seconds == 120 and stats.pids == 0


def test_the_gateway_is_at_the_containers_address(pve, settings):
    settings.PROXMOX_NETWORK = "name=eth0,bridge=vmbr0,ip=10.20.30.40/24"
    backend = ProxmoxBackend()
    agent, _ = deploy(backend)
    assert backend.gateway_endpoint(agent) == ("10.20.30.40", 18789)
    backend.stop(agent)
    with pytest.raises(WorkloadMissing):
        backend.gateway_endpoint(agent)  # a stopped container has no address


def test_a_failed_task_is_reported_in_pves_words(pve, settings):
    settings.PROXMOX_STORAGE = "no-such-storage"
    with pytest.raises(BackendError, match="Proxmox"):
        deploy(ProxmoxBackend())


def test_probe_and_an_unreachable_api(pve, settings):
    assert ProxmoxBackend().probe() == "Proxmox VE 9.0.10 (release 9.0)"
    settings.PROXMOX_URL = "https://127.0.0.1:9"
    with pytest.raises(BackendUnreachable):
        ProxmoxBackend().probe()
    with pytest.raises(BackendUnreachable):
        ProxmoxBackend().inspect(FakeAgent(container_id="100"))


def test_a_wrong_token_is_refused(pve, settings):
    settings.PROXMOX_TOKEN_SECRET = "wrong"
    with pytest.raises(BackendError, match="401"):
        ProxmoxBackend().probe()


def test_proxmox_is_a_target_only_when_configured(settings, db):
    settings.PROXMOX_URL = ""
    assert not registry.is_registered("proxmox")
    settings.PROXMOX_URL = "https://pve.example.net:8006"
    assert registry.is_registered("proxmox") and "proxmox" in registry.probe_targets()
