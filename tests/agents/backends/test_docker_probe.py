"""Probing an engine reaches the daemon itself, with no workload involved."""

from __future__ import annotations

import re

from agents.backends.docker import DockerBackend


def test_probe_answers_the_engines_version(docker_engine, docker_settings):
    expected = docker_engine.version()["Version"]
    words = DockerBackend().probe()
    assert re.fullmatch(r"Docker \S+ \(API \S+\)", words)
    assert expected in words
