"""Stats of an agent's pod from the metrics API (metrics.k8s.io) and the kubelet's summary
(`/api/v1/nodes/<node>/proxy/stats/summary`), mapped to the spec's snapshot.

- cpu_percent: cores in use x 100 (100 = one full core, as on Docker), from the metrics API,
  else the summary's usageNanoCores;
- memory_usage_mb: the working set (usage minus inactive page cache), metrics API else summary;
- memory_limit_mb: the container's limit (the agent's ram_mb);
- network_rx_mb / network_tx_mb: the pod's interfaces, summed, from the summary;
- pids: the pod's process count from the summary (kubelets since 1.21);
- uptime_seconds: since the runtime container last started;
- disk_read_mb / disk_write_mb: 0 — neither API reports block-device I/O of a pod.
A figure an API does not give (metrics-server missing, nodes/proxy refused) is 0.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from agents.backends.base import StatsSnapshot

MB = 1024 * 1024
_QUANTITY = re.compile(r"^([0-9.]+)([a-zA-Z]*)$")
_SUFFIX = {
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0,
    "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4,
}


def quantity(value) -> float:
    """A Kubernetes quantity ("250m", "1536Ki", "123456789n", "2") as a number; 0 if unreadable."""
    match = _QUANTITY.match(str(value or "").strip())
    if not match or match.group(2) not in _SUFFIX:
        return 0.0
    try:
        return float(match.group(1)) * _SUFFIX[match.group(2)]
    except ValueError:
        return 0.0


def summary_of_pod(summary: dict | None, *, namespace: str, pod: str) -> dict:
    """The pod's entry of a kubelet summary ({} when absent)."""
    for entry in (summary or {}).get("pods") or []:
        ref = entry.get("podRef") or {}
        if ref.get("name") == pod and ref.get("namespace") == namespace:
            return entry
    return {}


def _network(pod_summary: dict) -> tuple[float, float]:
    network = pod_summary.get("network") or {}
    interfaces = network.get("interfaces") or []
    if interfaces:
        return (sum(i.get("rxBytes") or 0 for i in interfaces), sum(i.get("txBytes") or 0 for i in interfaces))
    return float(network.get("rxBytes") or 0), float(network.get("txBytes") or 0)


def _container(pod_summary: dict, name: str) -> dict:
    for entry in pod_summary.get("containers") or []:
        if entry.get("name") == name:
            return entry
    return {}


def snapshot(*, metrics: dict | None, summary: dict | None, namespace: str, pod: str, container: str,
             memory_limit_bytes: float, running: bool, started_at: datetime | None) -> StatsSnapshot:
    pod_summary = summary_of_pod(summary, namespace=namespace, pod=pod)
    summary_container = _container(pod_summary, container)
    metric = next((c for c in (metrics or {}).get("containers") or [] if c.get("name") == container), None)
    if metric is not None:
        cores = quantity((metric.get("usage") or {}).get("cpu"))
        memory = quantity((metric.get("usage") or {}).get("memory"))
    else:
        cores = float((summary_container.get("cpu") or {}).get("usageNanoCores") or 0) / 1e9
        memory = float((summary_container.get("memory") or {}).get("workingSetBytes") or 0)
    rx, tx = _network(pod_summary)
    # The kubelet writes this one in snake case (stats/v1alpha1 ProcessStats).
    pids = int((pod_summary.get("process_stats") or {}).get("process_count") or 0)
    uptime = (datetime.now(UTC) - started_at).total_seconds() if running and started_at else 0.0
    if not running:
        cores = memory = 0.0
        pids = 0
    limit = float(memory_limit_bytes or 0)
    return StatsSnapshot(
        cpu_percent=round(cores * 100, 2),
        memory_usage_mb=round(memory / MB, 2),
        memory_limit_mb=round(limit / MB, 2),
        memory_percent=round(memory / limit * 100, 2) if limit else 0.0,
        network_rx_mb=round(rx / MB, 4),
        network_tx_mb=round(tx / MB, 4),
        disk_read_mb=0.0,
        disk_write_mb=0.0,
        pids=pids,
        uptime_seconds=round(max(uptime, 0.0), 1),
        running=running,
    )
