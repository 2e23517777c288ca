"""fleet.web, the Procfile's web process: its metrics folder and a respawned worker's clean-up."""

from __future__ import annotations

import os

from fleet import web


def test_the_metrics_folder_is_emptied_before_the_workers_start(tmp_path, monkeypatch):
    folder = tmp_path / "prometheus"
    folder.mkdir()
    (folder / "counter_123.db").write_bytes(b"left by an earlier run")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))

    assert web.prepare_metrics_dir() == folder
    assert list(folder.iterdir()) == []


def test_a_dead_workers_live_gauges_are_dropped_and_the_living_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    dead = 2**22 + 12345  # above the kernel's pid_max default: no such process
    for name in (f"gauge_livesum_{dead}.db", f"gauge_livesum_{os.getpid()}.db", f"counter_{dead}.db"):
        (tmp_path / name).write_bytes(b"")

    web.forget_dead_workers()

    assert sorted(p.name for p in tmp_path.iterdir()) == [f"counter_{dead}.db", f"gauge_livesum_{os.getpid()}.db"]
