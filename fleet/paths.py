"""Where an installation keeps its own files: `FLEET_VAR_DIR`, or var/ beside the code.

Read by the settings (SQLite, the embedded broker and cache, development secrets) and by the web
process before any setting is loaded (its Prometheus folder): two installations on one machine,
each with its own FLEET_VAR_DIR, share nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def var_dir() -> Path:
    return Path(os.environ.get("FLEET_VAR_DIR", BASE_DIR / "var"))
