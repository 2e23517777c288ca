"""An agent's output from its pod's log (the API's `pods/<name>/log`, with timestamps).

Kubernetes keeps one stream per container and does not tell stdout from stderr: every line is
reported as `stdout` (base.LogLine allows a target that cannot tell them apart to say so).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from math import ceil

from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from agents.backends.base import LogLine, WorkloadMissing
from agents.backends.kubernetes_client import API_TIMEOUT, api_errors, status_of

FOLLOW_READ_TIMEOUT = 3600  # a followed log ends after an hour of silence (the client reconnects)


def parse_line(raw: str) -> LogLine | None:
    """`<RFC 3339 timestamp> <text>` as the API writes a line with timestamps=true."""
    stamp, _, text = raw.partition(" ")
    try:
        ts = datetime.fromisoformat(_trim_nanoseconds(stamp.replace("Z", "+00:00")))
    except ValueError:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return LogLine(ts=ts, stream="stdout", line=text)


def _trim_nanoseconds(stamp: str) -> str:
    """Python reads at most microseconds: 2026-01-01T00:00:00.123456789+00:00 -> .123456."""
    head, dot, rest = stamp.partition(".")
    if not dot:
        return stamp
    digits = "".join(ch for ch in rest if ch.isdigit())
    return f"{head}.{digits[:6]}{rest[len(digits):]}"


def pod_logs(core: k8s.CoreV1Api, namespace: str, pod: str, container: str, *, where: str, tail: int | None,
             since: datetime | None, follow: bool) -> Iterator[LogLine]:
    kwargs = {"container": container, "timestamps": True, "follow": follow, "_preload_content": False,
              "_request_timeout": (API_TIMEOUT[0], FOLLOW_READ_TIMEOUT) if follow else API_TIMEOUT}
    if tail is not None:
        kwargs["tail_lines"] = max(int(tail), 0)
    if since is not None:
        kwargs["since_seconds"] = max(ceil((datetime.now(UTC) - since).total_seconds()), 1)
    with api_errors(where):
        try:
            response = core.read_namespaced_pod_log(pod, namespace, **kwargs)
        except ApiException as exc:
            if status_of(exc) == 404:
                raise WorkloadMissing("The agent's pod no longer exists on the cluster.") from exc
            raise
    return _lines(response, since=since, where=where)


def _lines(response, *, since: datetime | None, where: str) -> Iterator[LogLine]:
    buffer = b""
    try:
        with api_errors(where):
            for chunk in response.stream(4096, decode_content=True):
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for raw in complete:
                    line = parse_line(raw.decode("utf-8", "replace"))
                    # since_seconds is whole seconds: the exact bound is applied here.
                    if line is not None and (since is None or line.ts >= since):
                        yield line
        if buffer:
            line = parse_line(buffer.decode("utf-8", "replace"))
            if line is not None and (since is None or line.ts >= since):
                yield line
    finally:
        response.release_conn()
