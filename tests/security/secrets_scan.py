"""The secrets scan of the whole test session (a pytest plugin, tests/conftest.py loads it).

While the suite runs it learns every secret Fleet makes or is given: each plaintext that goes
through `fleet.crypto` (gateway tokens, webhook secrets and header values, SSH keys...), each
password set on a user, each raw API key and each session JWT issued. It watches two outlets as
they happen:

- every log record (any logger): no secret of any kind, ever;
- every response an in-process request gets: no password and no encrypted-at-rest secret (a
  key appears once in its create response and a JWT in a sign-in response by design, so those
  two kinds are looked for in logs, the database and the admin only).

Anything found fails the run when the session ends, whatever tests were chosen: each process's
findings are reported in the terminal summary and turn the exit status to 1. Under pytest-xdist
every worker watches its own tests and hands its findings to the controller, which reports them
all. `tests/security/test_secrets_scan.py` proves the watch is live and scans a PostgreSQL dump
and the admin pages itself.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

import pytest

MIN_SECRET_LENGTH = 8  # shorter values are too likely to occur by chance in other text
MIN_DISTINCT = 5
PREFIX = {"jwt": "eyJ", "api_key": "fk_"}  # every session JWT and every raw API key starts so


@dataclass
class Registry:
    # kind -> set of values: "password", "encrypted" (plaintexts of fleet.crypto), "api_key", "jwt"
    secrets: dict[str, set[str]] = field(default_factory=lambda: {k: set() for k in
                                                                   ("password", "encrypted", "api_key", "jwt")})
    findings: list[str] = field(default_factory=list)
    current_test: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    scanning: bool = False  # re-entrancy guard: the scan itself must not scan

    def add(self, kind: str, value) -> None:
        # Low-entropy test values ("pppppppp") would match unrelated text by chance.
        if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH and len(set(value)) >= MIN_DISTINCT:
            with self.lock:
                self.secrets[kind].add(value)

    def find(self, text: str, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
        # Thousands of JWTs and keys are issued in a run: look for them only in text holding
        # their fixed prefix, so scanning every log line and response stays cheap.
        kinds = tuple(kind for kind in kinds if PREFIX.get(kind, "") in text)
        with self.lock:
            return [(kind, value) for kind in kinds for value in self.secrets[kind] if value in text]

    def report(self, where: str, text: str, kinds: tuple[str, ...]) -> None:
        for kind, value in self.find(text, kinds):
            self.findings.append(f"{self.current_test}: a {kind} ({value[:4]}...) in {where}")


REGISTRY = Registry()
ALL_KINDS = ("password", "encrypted", "api_key", "jwt")
NEVER_RETURNED = ("password", "encrypted")
# Test-only libraries that log the fixtures they are handed (factory_boy logs set_password's
# argument at DEBUG): not Fleet's log lines.
TEST_LIBRARY_LOGGERS = ("factory",)


def _scan_record(record) -> None:
    if REGISTRY.scanning or record.name.split(".")[0] in TEST_LIBRARY_LOGGERS:
        return
    REGISTRY.scanning = True
    try:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += " " + repr(record.exc_info[1])
        REGISTRY.report(f"the log line {record.name}: {text[:80]!r}", text, ALL_KINDS)
    except Exception:  # a record that cannot be formatted is no finding
        pass
    finally:
        REGISTRY.scanning = False


def _wrap(owner, name: str, record):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        record(args, kwargs, result)
        return result

    wrapper.__wrapped__ = original
    setattr(owner, name, wrapper)


@pytest.fixture(autouse=True, scope="session")
def _secrets_watched():
    """Installed once, for the whole session, once Django is set up."""
    import jwt
    from django.core.handlers.base import BaseHandler

    from accounts.models import User
    from fleet.crypto import KeyRing
    from workspaces import services as workspace_services

    _wrap(KeyRing, "encrypt", lambda args, kwargs, result: REGISTRY.add("encrypted", args[1]))
    _wrap(User, "set_password", lambda args, kwargs, result: REGISTRY.add("password", args[1]))
    _wrap(workspace_services, "api_key_generate", lambda args, kwargs, result: REGISTRY.add("api_key", result))
    _wrap(jwt, "encode", lambda args, kwargs, result: REGISTRY.add("jwt", result))

    def scan_response(args, kwargs, response):
        if REGISTRY.scanning or getattr(response, "streaming", False):
            return
        request = args[1]
        text = response.content.decode("utf-8", errors="replace")
        REGISTRY.report(f"the response to {request.method} {request.path}", text, NEVER_RETURNED)

    _wrap(BaseHandler, "get_response", scan_response)
    # Every record any logger handles, whatever handlers a test's logging configuration leaves
    # (a dictConfig replaces the root's handlers, so a handler of ours could be dropped).
    _wrap(logging.Logger, "handle", lambda args, kwargs, result: _scan_record(args[1]))
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    REGISTRY.current_test = item.nodeid


WORKER_FINDINGS: list[str] = []  # the controller's: what the xdist workers handed over


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller, as a worker ends: its findings."""
    WORKER_FINDINGS.extend(getattr(node, "workeroutput", {}).get("secret_findings", []))


def pytest_sessionfinish(session, exitstatus):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports
        workeroutput["secret_findings"] = list(REGISTRY.findings)
        return
    if REGISTRY.findings or WORKER_FINDINGS:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if getattr(config, "workeroutput", None) is not None:
        return
    findings = REGISTRY.findings + WORKER_FINDINGS
    if findings:
        terminalreporter.section("secrets scan: secrets in clear", sep="=", red=True, bold=True)
        for line in findings[:50]:
            terminalreporter.write_line(line)
