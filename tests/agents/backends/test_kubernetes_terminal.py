"""KubernetesBackend.attach_exec through the official client's exec WebSocket, against kmock with
the kubelet's exec part (tests/infra/kube_exec.py: an opted-in pod's command runs on this
machine, under a pty): the exec request the API server gets, the shell's TTY and size, a
resize on channel 4, and closing it ending every process started from it. A pod that is not
running and a missing one are refused before any exec."""

from __future__ import annotations

import asyncio
import os
import types
from pathlib import Path

import pytest

from agents.backends.base import WorkloadMissing, WorkloadNotRunning
from agents.backends.kubernetes import KubernetesBackend
from agents.backends.terminal import MARKER_VARIABLE, ThreadedExecSession
from tests.agents.backends.support import FakeAgent, spec_for
from tests.agents.backends.terminal_support import output_until
from tests.support import wait_until

NS = "agents"


@pytest.fixture
def k8s(kube_cluster):
    cluster = types.SimpleNamespace(name="test", kubeconfig=kube_cluster.kubeconfig(namespace=NS), namespace=NS,
                                    storage_class="fast", service_type="NodePort", gateway_host="")
    return KubernetesBackend(cluster)


@pytest.fixture
def pod_agent(k8s, kube_cluster):
    """An agent whose pod's exec runs here."""
    agent = FakeAgent(execution_target_id="k8s:test")
    agent.place(k8s.create(agent, spec_for(agent)))
    pod = next(pod for pod in kube_cluster.pods(NS) if pod["metadata"]["labels"].get("fleet.agent_id") == agent.id)
    kube_cluster.exec_into(NS, pod["metadata"]["name"])
    return agent


def marked_here(marker: str) -> list[int]:
    """The processes of this machine (the emulated pod's) carrying the terminal's marker."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"{MARKER_VARIABLE}={marker}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_pods_shell_is_a_tty_sized_and_resized_through_the_exec_api(k8s, pod_agent, kube_cluster):
    async def scenario():
        shell = await k8s.attach_exec(pod_agent, cols=100, rows=30)
        assert isinstance(shell, ThreadedExecSession)  # the client's WebSocket only blocks
        try:
            await shell.write(b'echo "u=$(id -u)= size=$(stty size)= m=$FLEET_TERMINAL="\n')
            found = await output_until(shell, rb"u=(\d+)= size=(\d+ \d+)= m=(\w+)=")
            await shell.resize(132, 43)
            await shell.write(b'echo "again=$(stty size)="\n')
            again = await output_until(shell, rb"again=(\d+ \d+)=")
            return found.groups(), again.group(1)
        finally:
            await shell.close()

    (uid, size, _), resized = asyncio.run(scenario())
    assert (int(uid), size, resized) == (os.getuid(), b"30 100", b"43 132")
    opened = [r for r in kube_cluster.requests() if r.url.path.endswith("/exec") and r.params.get("tty") == "true"][-1]
    assert opened.url.query.getall("command")[:2] == ["/bin/sh", "-c"]
    assert (opened.params["container"], opened.params["stdin"], opened.params.get("stderr")) == ("runtime", "true",
                                                                                                "false")


def test_closing_ends_the_pods_shell_and_everything_started_from_it(k8s, pod_agent):
    async def scenario():
        shell = await k8s.attach_exec(pod_agent, cols=80, rows=24)
        await shell.write(b'sleep 300 & echo "m=$FLEET_TERMINAL="\n')
        marker = (await output_until(shell, rb"m=(\w+)=")).group(1).decode()
        during = marked_here(marker)
        await shell.close()
        return marker, during

    marker, during = asyncio.run(scenario())
    assert len(during) >= 2  # the shell and its sleep
    wait_until(lambda: marked_here(marker) == [], timeout=10)


def test_a_pod_not_running_and_an_agent_without_a_pod_are_refused(k8s, pod_agent, kube_cluster):
    pod = next(p for p in kube_cluster.pods(NS) if p["metadata"]["labels"].get("fleet.agent_id") == pod_agent.id)
    kube_cluster.call(lambda: pod["status"].update(phase="Pending"))
    with pytest.raises(WorkloadNotRunning):
        asyncio.run(k8s.attach_exec(pod_agent, cols=80, rows=24))
    k8s.remove(pod_agent)
    with pytest.raises(WorkloadMissing):
        asyncio.run(k8s.attach_exec(pod_agent, cols=80, rows=24))
