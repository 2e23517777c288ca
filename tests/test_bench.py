"""The benchmark runner's own helpers (benchmarks themselves never run as tests)."""

import os
import signal
import subprocess
import sys

import pytest

from bench import Timing, measure, report
from bench.__main__ import database_url, discover
from bench._procfs import children_of, listening_process
from bench._servers import RunningServer
from tests.support import free_loopback_port, wait_until


def test_measure_times_each_call_after_the_warmup():
    calls = []

    timing = measure(lambda: calls.append(1), repeat=5, warmup=2)

    assert len(calls) == 7
    assert len(timing.seconds) == 5


def test_timing_figures_come_from_the_samples():
    timing = Timing([0.001, 0.002, 0.003, 0.004])

    assert timing.median_ms == 2.5
    assert timing.p95_ms == 4.0
    assert timing.per_second == 400


def test_report_prints_one_line_with_floats_rounded(capsys):
    report("agents list", median_ms=9.8765, queries=3)

    assert capsys.readouterr().out == "  agents list: median_ms=9.88, queries=3\n"


def test_discover_lists_public_modules_in_name_order(tmp_path):
    for name in ("stats_sampler.py", "_helpers.py", "agents_list.py", "__main__.py", "notes.txt"):
        (tmp_path / name).write_text("")

    assert discover([str(tmp_path)]) == ["agents_list", "stats_sampler"]


def test_database_url_points_servers_at_the_benchmark_database():
    postgres = {
        "ENGINE": "django.db.backends.postgresql", "NAME": "test_fleet", "USER": "postgres",
        "PASSWORD": "p@ss", "HOST": "127.0.0.1", "PORT": 5432,
    }
    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/tmp/bench.sqlite3"}

    assert database_url(postgres) == "postgres://postgres:p%40ss@127.0.0.1:5432/test_fleet"
    assert database_url(sqlite) == "sqlite:////tmp/bench.sqlite3"


@pytest.fixture
def running_server():
    """A server the bench did not start: Python's own, on a loopback port."""
    port = free_loopback_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port, process
    finally:
        process.kill()
        process.wait()


def test_a_running_server_is_found_by_its_port_and_called_with_its_own_caller(running_server, monkeypatch):
    port, process = running_server
    monkeypatch.setenv("BENCH_RUNNING_TOKEN", "its-token")
    monkeypatch.setenv("BENCH_RUNNING_AGENT", "its-agent")
    server = wait_until(lambda: _found(f"running:{port}"))

    assert server.pids() == [process.pid]
    assert server.get("/").status == 200
    assert server.bearer == {"Authorization": "Bearer its-token"} and server.agent_id == "its-agent"
    assert server.database is None
    server.stop()
    assert process.poll() is None  # not the bench's to stop


def _found(name):
    try:
        return RunningServer(name)
    except RuntimeError:
        return None


def test_a_running_server_needs_its_caller_and_a_listener(monkeypatch):
    monkeypatch.delenv("BENCH_RUNNING_TOKEN", raising=False)
    monkeypatch.setenv("BENCH_RUNNING_AGENT", "its-agent")
    with pytest.raises(RuntimeError, match="BENCH_RUNNING_TOKEN"):
        RunningServer("running:1")
    monkeypatch.setenv("BENCH_RUNNING_TOKEN", "its-token")
    with pytest.raises(RuntimeError, match="nothing listens"):
        RunningServer(f"running:{free_loopback_port()}")


# A master whose two workers each open their own listening socket on one port (SO_REUSEPORT, as
# granian's workers do), then wait.
_REUSEPORT_MASTER = """
import os, socket, sys, time
port = int(sys.argv[1])
for _ in range(2):
    if os.fork() == 0:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
        time.sleep(60)
        os._exit(0)
time.sleep(60)
"""


def test_workers_with_sockets_of_their_own_lead_to_their_master():
    port = free_loopback_port()
    master = subprocess.Popen([sys.executable, "-c", _REUSEPORT_MASTER, str(port)])
    try:
        wait_until(lambda: len(children_of(master.pid)) == 3 and listening_process(port) == master.pid)
    finally:
        for pid in children_of(master.pid)[1:]:
            os.kill(pid, signal.SIGKILL)
        master.kill()
        master.wait()
