"""The vocabulary the tests of every app share: who is who (Tenancy), calling the API as
them (client_for), the clock (frozen_clock), racing threads (run_in_threads, in_thread),
real services (need_service), waiting (wait_until) and the URLconf's routes (url_patterns)."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Generic, TypeVar

import pytest
import time_machine
from django.db import connections
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from workspaces.models import Workspace
from workspaces.roles import Role

T = TypeVar("T")

IN_CI = os.environ.get("CI", "").lower() == "true"


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def need_service(available: bool, reason: str) -> None:
    """Skip a test whose real service is missing; under CI=true, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required service missing under CI: {reason}")
    pytest.skip(reason)


def client_for(user=None, *, api_key: str | None = None, header: str = "X-Api-Key") -> APIClient:
    """An APIClient carrying a Bearer session for `user`, or an API key in `header`."""
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=user)}")
    if api_key is not None:
        meta = "HTTP_" + header.upper().replace("-", "_")
        client.credentials(**{meta: api_key})
    return client


@dataclass
class Tenancy:
    """One workspace with someone in every role, and people outside it (the `tenancy` fixture).

    `owner` created `workspace`; `admin`, `editor` and `viewer` hold those roles in it;
    `agent_owner` is a viewer too, and owns the agents `agent()` shares into it: direct
    ownership next to the lowest role. `outsider` owns `other_workspace` and has no role
    here; `platform_admin` runs the platform and is a member of no workspace.
    """

    workspace: Workspace
    other_workspace: Workspace
    owner: User
    admin: User
    editor: User
    viewer: User
    agent_owner: User
    outsider: User
    platform_admin: User

    @classmethod
    def create(cls) -> Tenancy:
        owner, outsider = UserFactory(), UserFactory()
        workspace = WorkspaceFactory(owner=owner)
        return cls(
            workspace=workspace,
            other_workspace=WorkspaceFactory(owner=outsider),
            owner=owner,
            admin=make_member(workspace, Role.ADMIN),
            editor=make_member(workspace, Role.EDITOR),
            viewer=make_member(workspace, Role.VIEWER),
            agent_owner=make_member(workspace, Role.VIEWER),
            outsider=outsider,
            platform_admin=AdminFactory(),
        )

    def key(self, *scopes: str, workspace: Workspace | None = None) -> str:
        """The raw secret of a new API key with `scopes`, of `workspace` (this one unless
        given) and issued by that workspace's owner."""
        workspace = workspace or self.workspace
        return make_api_key(workspace=workspace, scopes=scopes)[1]

    def agent(self, owner: User | None = None, *, workspace: Workspace | None = None, **fields) -> Agent:
        """An agent of `owner` (agent_owner unless given) assigned to `workspace` (this one
        unless given). Stopped and without a container unless `fields` say otherwise, so its
        routes answer without an engine."""
        fields.setdefault("status", Status.STOPPED)
        fields.setdefault("container_id", "")
        agent = AgentFactory(owner=owner or self.agent_owner, **fields)
        WorkspaceAgentFactory(workspace=workspace or self.workspace, agent=agent)
        return agent

    def client(self, caller: str) -> APIClient:
        """A client for a caller named as the access tables name them: a user attribute
        ("owner", "viewer", "outsider", ...), "anonymous", "key:<scope>,<scope>" (a key of
        this workspace issued by its owner) or "other-key" (a key of other_workspace with
        agents:read and agents:write)."""
        if caller == "anonymous":
            return client_for()
        if caller == "other-key":
            return client_for(api_key=self.key("agents:read", "agents:write", workspace=self.other_workspace))
        if caller.startswith("key:"):
            return client_for(api_key=self.key(*caller.removeprefix("key:").split(",")))
        return client_for(getattr(self, caller))


class Clock:
    """The clock of a frozen_clock block: `now()` reads it, `move_to()` and `advance()` move it."""

    def __init__(self, traveller: time_machine.Traveller) -> None:
        self._traveller = traveller

    def now(self) -> datetime:
        return timezone.now()

    def move_to(self, moment: datetime) -> None:
        self._traveller.move_to(moment)

    def advance(self, delta: timedelta) -> None:
        self._traveller.shift(delta)


@contextmanager
def frozen_clock(at: datetime | None = None, *, tick: bool = False) -> Iterator[Clock]:
    """Stop the clock at `at` (the current moment unless given) for the block. With tick=True
    it runs on from there instead, for code that waits on real sockets meanwhile. The `clock`
    fixture is one frozen_clock around the whole test."""
    with time_machine.travel(at or timezone.now(), tick=tick) as traveller:
        yield Clock(traveller)


class InThread(Generic[T]):
    """A call running in a thread of its own, which closes its database connections when done
    (each thread has its own). `result()` waits for it and gives back its value or raises its
    exception, so a failure in the thread fails the test."""

    def __init__(self, call: Callable[[], T], *, barrier: threading.Barrier | None = None) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call, barrier), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], T], barrier: threading.Barrier | None) -> None:
        try:
            if barrier is not None:
                barrier.wait(timeout=30)
            self._value = call()
        except BaseException as error:  # handed over to result(), in the test's thread
            self._error = error
        finally:
            connections.close_all()

    def join(self, timeout: float = 60) -> None:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError(f"a thread of the test still runs after {timeout}s")

    def result(self, timeout: float = 60) -> T:
        """The call's value, once it has ended; the exception it raised is raised here."""
        self.join(timeout)
        if self._error is not None:
            raise self._error
        return self._value

    def outcome(self, timeout: float = 60) -> T | BaseException:
        """The call's value or the exception it raised, once it has ended."""
        self.join(timeout)
        return self._value if self._error is None else self._error


def in_thread(call: Callable[[], T]) -> InThread[T]:
    """Start `call` in a thread of its own now, for a test that steps through a race itself."""
    return InThread(call)


def run_in_threads(
    *calls: Callable[[], T], timeout: float = 60, return_exceptions: bool = False
) -> list[T | BaseException]:
    """Run the calls at once, each in a thread of its own released by one barrier, and give
    back their results in the calls' order once all have ended. Each thread closes its
    database connections. The first exception a call raised is raised here, unless
    `return_exceptions`, when it stands in the list in the call's place."""
    barrier = threading.Barrier(len(calls))
    threads = [InThread(call, barrier=barrier) for call in calls]
    for thread in threads:
        thread.join(timeout)
    return [thread.outcome() if return_exceptions else thread.result() for thread in threads]


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.1) -> T:
    """Poll `predicate` until it returns something truthy and return that; fail on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout}s: {predicate}")
        time.sleep(interval)


def make_run_processes() -> tuple[str, ...]:
    """The Procfile processes `make run` starts (the Makefile's PROCESSES), for tests that start
    the stack as it does."""
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    found = re.search(r"^PROCESSES := (.+)$", makefile, re.M)
    assert found, "the Makefile names no PROCESSES"
    return tuple(found.group(1).split())


_MANAGEMENT_INPUT = re.compile(r'<input[^>]*name="([\w-]+-(?:TOTAL|INITIAL|MIN_NUM|MAX_NUM)_FORMS)"[^>]*value="(\d*)"')


def inline_management_forms(page: str) -> dict[str, str]:
    """The management fields of every inline formset on an admin page, as a browser posts them
    back (a change page's POST needs them for each inline, whichever app added it)."""
    return dict(_MANAGEMENT_INPUT.findall(page))


def url_patterns(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    """(route, pattern) of every view of the URLconf (or of `resolver`), includes walked through."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from url_patterns(entry, route)
        elif isinstance(entry, URLPattern):
            yield route, entry
