"""A PostgreSQL cluster of a test's own on a free loopback port, that the test stops and starts
again on the same port (a database restart), so the restart never reaches the shared server
other tests use at the same time. Trust authentication for `postgres` on loopback, fsync off
(nothing here must survive the machine), a data directory removed by `remove()`.

    server = PrivatePostgres(); server.create(); url = server.database("fleet")
    ...; server.stop(); server.start(); ...; server.remove()

As root (CI) the server runs as the `postgres` user: PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.infra.runtimes import free_loopback_port
from tests.support import need_service

BIN = Path(os.environ.get("FLEET_TEST_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))
SERVER_USER = "postgres"


def _run_as() -> dict:
    """Popen's user and group for the server's commands: the `postgres` user when we are root."""
    if os.geteuid() != 0:
        return {}
    account = pwd.getpwnam(SERVER_USER)
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


class PrivatePostgres:
    def __init__(self):
        need_service((BIN / "initdb").exists() and (BIN / "pg_ctl").exists(),
                     f"this test starts its own PostgreSQL ({BIN}/initdb, pg_ctl)")
        if os.geteuid() == 0:
            need_service(_has_user(SERVER_USER), f"PostgreSQL runs as the {SERVER_USER} user, which is missing")
        self.port = free_loopback_port()
        # Not the test's tmp_path: pytest's base directory is readable by its owner only, and the
        # server may run as another user.
        self.root = Path(tempfile.mkdtemp(prefix=f"fleet-pg-{self.port}-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        if os.geteuid() == 0:
            shutil.chown(self.root, SERVER_USER, SERVER_USER)
        self._running = False

    def url(self, database: str = "postgres") -> str:
        return f"postgres://{SERVER_USER}@127.0.0.1:{self.port}/{database}"

    def create(self) -> None:
        """initdb, then start."""
        subprocess.run([BIN / "initdb", "-D", self.data, "-U", SERVER_USER, "--auth=trust", "--encoding=UTF8",
                        "--locale=C", "--no-sync", "--no-instructions"],
                       check=True, capture_output=True, **_run_as())
        self.start()

    def database(self, name: str) -> str:
        """A new, empty database; its URL."""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._pg_ctl("start", "-w", "-t", "30", "-l", self.log, "-o", options)
        self._running = True

    def stop(self) -> None:
        """A fast shutdown, as a restart by an operator or a platform: every session is ended."""
        if self._running:
            self._pg_ctl("stop", "-w", "-t", "30", "-m", "fast")
            self._running = False

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _pg_ctl(self, *args) -> None:
        done = subprocess.run([BIN / "pg_ctl", "-D", self.data, *args], capture_output=True, text=True, **_run_as())
        tail = self.log.read_text()[-2000:] if self.log.exists() else ""
        assert done.returncode == 0, f"pg_ctl {args[0]}: {done.stdout}{done.stderr}\n{tail}"


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
