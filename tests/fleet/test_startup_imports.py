"""The web process loads no target's client library until a target is used: the kubernetes
package and paramiko weigh about 30 MB each in every worker (the memory goal of the web server
in docs/performance.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAZY = ("kubernetes", "paramiko", "proxmoxer", "docker", "fabric")

PROBE = """
import sys
import django
django.setup()
from fleet.wsgi import application
from django.test import Client
Client().get("/api/health")
print(" ".join(name for name in {lazy!r} if name in sys.modules))
"""


def test_a_web_worker_imports_no_target_client_library_until_one_is_used():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run([sys.executable, "-c", PROBE.format(lazy=LAZY)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not result.stdout.split(), f"imported at start: {result.stdout}"
