"""gunicorn settings, for running the web application under gunicorn instead of the Procfile's
granian (fleet/web.py says why granian): `gunicorn -c python:fleet.gunicorn_conf fleet.wsgi:application`.

With several web workers each keeps its own Prometheus counters; prometheus_client's
multiprocess mode has every worker write them to files in PROMETHEUS_MULTIPROC_DIR, and
/metrics (fleet.metrics) sums the files. The folder must be empty before the workers start,
so the master empties it here, once, before it forks.
"""

from __future__ import annotations

import os

# A sync worker silent this long is killed. gunicorn's 30 s is shorter than the slowest
# synchronous routes: a channel CLI login inside the workload (up to
# CHANNELS_CLI_LOGIN_TIMEOUT_SECONDS, 60 s; Zalo's offline failure alone takes about 25 s) and
# the channel gateway calls (CHANNELS_GATEWAY_TIMEOUT_SECONDS, 30 s).
timeout = 90
# The longest request line accepted (gunicorn's maximum; its default 4094 refuses, as an HTML
# 414, URLs a browser sends with a long percent-encoded query).
limit_request_line = 8190


def _binds(addresses: str, port: str) -> list[str]:
    """BIND_ADDRESS is one address or several, comma-separated (loopback plus the Docker bridge
    gateway, so bridged agents reach FLEET_INTERNAL_URL); an IPv6 address goes in brackets."""
    return [f"{address.strip()}:{port}" for address in addresses.split(",") if address.strip()]


# The web process listens on loopback only unless BIND_ADDRESS says otherwise (docs/configuration.md).
bind = _binds(
    os.environ.get("BIND_ADDRESS") or "127.0.0.1",
    os.environ.get("FLEET_PORT") or os.environ.get("PORT") or "8000",
)


def on_starting(server) -> None:
    from fleet.web import prepare_metrics_dir

    prepare_metrics_dir()


def child_exit(server, worker) -> None:
    # A dead worker's live gauges must stop counting; its counters stay in the sums.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
