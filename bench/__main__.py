"""Run benchmarks: `python -m bench` runs every bench/<name>.py; `python -m bench NAME ...` some.

Each module's main() runs against one throwaway database (test_<name> of DATABASE_URL, or a
SQLite file under var/), flushed after every module. A module that raises is reported and the
run goes on; the exit status says whether any did.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import traceback
from urllib.parse import quote

import bench


def discover(path: list[str] | None = None) -> list[str]:
    """Every public module of the bench package (or of `path`), in name order."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(path or bench.__path__)
        if not info.name.startswith("_")
    )


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL for the database Django is using, handed to servers a benchmark starts."""
    if settings_dict["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{settings_dict['NAME']}"
    credentials = quote(settings_dict.get("USER") or "", safe="")
    if settings_dict.get("PASSWORD"):
        credentials += ":" + quote(settings_dict["PASSWORD"], safe="")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{credentials}@{host}:{port}/{settings_dict['NAME']}"


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    names = argv or discover()
    if not names:
        print("no benchmarks under bench/")
        return 0
    if connection.vendor == "sqlite":
        # A file, not memory: servers started by a benchmark must open the same database.
        settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = str(
            settings.VAR_DIR / "bench.sqlite3"
        )

    old_config = setup_databases(verbosity=0, interactive=False)
    os.environ["DATABASE_URL"] = database_url(connection.settings_dict)
    failed = []
    try:
        for name in names:
            print(f"== {name}", flush=True)
            try:
                importlib.import_module(f"bench.{name}").main()
            except Exception:
                traceback.print_exc()
                failed.append(name)
            finally:
                call_command("flush", interactive=False, verbosity=0)
    finally:
        teardown_databases(old_config, verbosity=0)
    if failed:
        print(f"benchmarks that raised: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
