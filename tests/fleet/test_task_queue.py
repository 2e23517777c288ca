"""Services start their tasks by name (fleet.task_queue): every name they use is a registered
task, also in a web process that has not imported the task's module yet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from fleet.celery import app

ROOT = Path(__file__).resolve().parents[2]
APPS = ("accounts", "agents", "alerts", "channels", "fleet", "integrations", "llm", "sandbox", "workspaces")
TASK_NAME = re.compile(r'^[A-Z_]+_TASK = "([a-z_.]+)"', re.MULTILINE)


def _task_names_in_source() -> set[str]:
    return {name for app_dir in APPS for path in (ROOT / app_dir).rglob("*.py")
            for name in TASK_NAME.findall(path.read_text())}


def test_every_task_name_the_code_starts_is_a_registered_task():
    names = _task_names_in_source()
    app.loader.import_default_modules()
    assert len(names) >= 15
    assert names - set(app.tasks) == set()


PROBE = """
import sys
import django
django.setup()
assert "sandbox.tasks" not in sys.modules
from fleet.task_queue import task_named
print(task_named("sandbox.tasks.sandbox_policy_apply").name)
"""


def test_a_task_whose_module_a_web_process_never_imported_is_found_by_name():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["sandbox.tasks.sandbox_policy_apply"]
