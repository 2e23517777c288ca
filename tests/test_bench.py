"""The benchmark runner's own helpers (benchmarks themselves never run as tests)."""

from bench import Timing, measure, report
from bench.__main__ import database_url, discover


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
