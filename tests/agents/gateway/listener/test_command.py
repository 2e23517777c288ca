"""`manage.py gateway_listener`: the Procfile's `gateway` process, its options, its signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from bench.__main__ import database_url

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.django_db
def test_once_with_no_hook_registered_holds_nothing_and_says_so(capsys):
    call_command("gateway_listener", "--once", "--shard", "1", "--shards", "2")

    assert capsys.readouterr().out.splitlines() == ["shard 1/2: wanted 0, connected 0"]


@pytest.mark.parametrize(("options", "complaint"), [
    (["--shard", "3", "--shards", "3"], "between 0 and 2"),
    (["--shards", "0"], "at least 1"),
    (["--shard", "-1"], "between 0 and 0"),
])
def test_an_impossible_shard_is_refused_before_anything_starts(options, complaint):
    with pytest.raises(CommandError, match=complaint):
        call_command("gateway_listener", "--once", *options)


def _listener(**env) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "gateway_listener"], cwd=ROOT, text=True,
        env={**os.environ, "DATABASE_URL": database_url(connection.settings_dict), **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


@pytest.mark.django_db
def test_the_process_refreshes_until_sigterm_then_exits_zero():
    process = _listener(GATEWAY_LISTENER_REFRESH_SECONDS="0.2", GATEWAY_LISTENER_SHARDS="3", GATEWAY_LISTENER_SHARD="2")
    try:
        started = process.stderr.readline()  # logging goes to stderr; the first line says it runs
        assert "Gateway listener shard 2/3 started (refresh every 0.2 s)" in started, started
        time.sleep(0.5)  # a few refreshes
        assert process.poll() is None

        process.send_signal(signal.SIGTERM)

        assert process.wait(timeout=15) == 0
        assert "Gateway listener shard 2/3 stopped" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_shard_setting_out_of_range_stops_the_process_with_the_reason():
    process = _listener(GATEWAY_LISTENER_SHARDS="2", GATEWAY_LISTENER_SHARD="2")
    try:
        assert process.wait(timeout=60) != 0
        assert "between 0 and 1" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
