"""Starting the next test module's OpenClaw while the current module runs (tests/infra/runtimes.py).

OpenClaw takes about 10 s to become ready, and every module that does not share its runtimes
(SHARES_RUNTIMES) gets one of its own. The modules that start one run in order, each engine group
on one worker (tests/conftest.py), and that order is known once the session is collected: the
next run is the next one of the same group.
So once a module's runtime is ready, the next such module's OpenClaw is started in a background
thread, bound to that module's own fake model (created then, handed to its `fake_model` fixture),
with its own token: by the time the next module asks, it is usually ready, and nothing has used it.

At most one is being started ahead at a time, so a worker holds at most the current module's
OpenClaw, the next one's and the session's shared ones. One never claimed (a test failed to
collect, a run stopped early) is stopped when the session ends.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import docker

from tests.infra.fake_model import FakeModel
from tests.infra.runtime_containers import (
    OPENCLAW_IMAGE,
    READY_ROUTE,
    RunningRuntime,
    openclaw_use_model,
    start_container,
    stop_container,
    wait_ready,
)

logger = logging.getLogger(__name__)

OPENCLAW_FIXTURE = "openclaw_runtime"


class RunPlan:
    """The session's tests as runs of one module each, in the order they run (a module can run in
    two stretches: pytest-django puts transactional tests after the others), and which runs take
    a module-scoped OpenClaw of their own (not SHARES_RUNTIMES)."""

    def __init__(self, items) -> None:
        self._run_of: dict[str, int] = {}
        self._needs_openclaw: list[bool] = []
        self._group: list[str | None] = []  # each run's xdist group: the worker that runs it
        previous = None
        for item in items:
            module = getattr(item, "module", None)
            if module is not previous or not self._needs_openclaw:
                self._needs_openclaw.append(False)
                self._group.append(_xdist_group(item))
                previous = module
            run = len(self._needs_openclaw) - 1
            self._run_of[item.nodeid] = run
            if module is not None and OPENCLAW_FIXTURE in getattr(item, "fixturenames", ()):
                self._needs_openclaw[run] |= not getattr(module, "SHARES_RUNTIMES", False)

    def run_of(self, item) -> int | None:
        return self._run_of.get(item.nodeid)

    def next_needing_openclaw(self, run: int) -> int | None:
        later = range(run + 1, len(self._needs_openclaw))
        return next((index for index in later
                     if self._needs_openclaw[index] and self._group[index] == self._group[run]), None)


def _xdist_group(item) -> str | None:
    marker = item.get_closest_marker("xdist_group") if hasattr(item, "get_closest_marker") else None
    return None if marker is None else marker.kwargs.get("name", marker.args[0] if marker.args else None)


@dataclass
class _Ahead:
    """An OpenClaw being started for a run of tests, and the fake model it is bound to."""
    run: int
    model: FakeModel
    runtime: Future  # of RunningRuntime, ready and configured
    model_taken: bool = False


class OpenClawPreboot:
    def __init__(self, plan: RunPlan | None, *, name_prefix: str, labels: dict[str, str]) -> None:
        self._plan = plan  # None: the order is not known, nothing is started ahead
        self._name_prefix = name_prefix
        self._labels = labels
        self._engine: docker.DockerClient | None = None  # the thread's own client, not the tests'
        self._ahead: _Ahead | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openclaw-preboot")

    # -- starting ahead ----------------------------------------------------------------
    def start_after(self, item, engine_url: str) -> None:
        """Start the OpenClaw of the next run after `item`'s that needs one, unless one is already
        on its way for a run still to come."""
        current = self._run(item)
        if current is None:
            return
        if self._ahead is not None and self._ahead.run < current:
            self._discard()  # its run went by without taking it (its tests skipped)
        upcoming = self._plan.next_needing_openclaw(current)
        if upcoming is None or self._ahead is not None:
            return
        if self._engine is None:
            self._engine = docker.DockerClient(base_url=engine_url, version="auto", timeout=60)
        model = FakeModel().start()
        self._ahead = _Ahead(upcoming, model, self._pool.submit(self._boot, model))

    def _run(self, item) -> int | None:
        return None if self._plan is None or item is None else self._plan.run_of(item)

    def _boot(self, model: FakeModel) -> RunningRuntime:
        runtime = start_container(self._engine, "openclaw", OPENCLAW_IMAGE, name_prefix=self._name_prefix,
                                  labels=self._labels)
        try:
            wait_ready(runtime, READY_ROUTE["openclaw"])
            openclaw_use_model(runtime, model)
        except BaseException:
            stop_container(runtime)
            raise
        return runtime

    # -- handing over ------------------------------------------------------------------
    def take_model(self, item) -> FakeModel | None:
        """The fake model the OpenClaw started ahead for `item`'s run is bound to; the caller stops it."""
        if self._ahead is None or self._ahead.run != self._run(item):
            return None
        self._ahead.model_taken = True
        return self._ahead.model

    def take_runtime(self, item, model: FakeModel) -> RunningRuntime | None:
        """`item`'s run's OpenClaw if it was started ahead for `model`; None when the caller must
        start one itself (none ahead, another run's, or its start failed: the caller's own start
        reports why)."""
        ahead = self._ahead
        if ahead is None or ahead.run != self._run(item) or ahead.model is not model:
            return None
        self._ahead = None
        try:
            return ahead.runtime.result()
        except Exception as exc:
            logger.warning("The OpenClaw started ahead did not come up (%s); starting another", exc)
            return None

    # -- the session's end -------------------------------------------------------------
    def close(self) -> None:
        """Stop an OpenClaw (and its fake model) that no module claimed."""
        self._discard()
        self._pool.shutdown(wait=True)
        if self._engine is not None:
            self._engine.close()

    def _discard(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        try:
            stop_container(ahead.runtime.result())
        except Exception:
            pass  # its start failed, and removed the container itself
        if not ahead.model_taken:
            ahead.model.stop()
