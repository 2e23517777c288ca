"""A real OpenClaw and a real Hermes for tests: containers of the runtime images on the test engine.

    pytestmark = pytest.mark.runtime

    def test_it(openclaw_runtime, db):
        agent = openclaw_runtime.agent()        # an Agent row whose gateway is that container
        assert gateway_for(agent).handshake().version == "2026.9.6"

One container per family and test module (OpenClaw takes about 10 s and 800 MB to start), or one
per family for the whole session among the modules that say `SHARES_RUNTIMES = True`: those that
only read what a runtime holds or add conversations to it, never change its configuration, its
channels or its container (each worker's session starts its own). On the
host network, listening on a free loopback port (FLEET_GATEWAY_BIND=loopback), with a fresh
random token. Both use the module's `fake_model`: Hermes through $HERMES_HOME/config.yaml,
copied in before it starts; OpenClaw through config.patch once it is ready (its provider
`fake`, priced at 1 USD per million input tokens and 2 per million output tokens, and the
default agent model `fake/<model>`).

The images (AGENT_IMAGE_OPENCLAW/HERMES' defaults, built by `manage.py build_runtime_images`
and by CI) must be on the engine: without them the tests skip, and fail under CI=true.
Containers carry the Docker fixture's session label, so a crashed session's are removed by
the next one. While one module runs, the next module's OpenClaw is started ahead, bound to that
module's own fake model (tests/infra/runtime_preboot.py).
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from tests.infra.docker import SESSION_ID, SESSION_LABEL
from tests.infra.fake_model import FakeModel
from tests.infra.runtime_containers import (  # noqa: F401 - tests import these from here
    FAKE_PROVIDER,
    HERMES_IMAGE,
    OPENCLAW_IMAGE,
    PRICE_PER_MILLION,
    READY_ROUTE,
    RUNTIME_UID,
    RunningRuntime,
    RuntimeImageMissing,
    RuntimeNotReady,
    free_loopback_port,
    hermes_config,
    openclaw_model_patch,
    openclaw_use_model,
    start_container,
    stop_container,
    wait_ready,
)
from tests.infra.runtime_preboot import OpenClawPreboot, RunPlan
from tests.support import need_service


def _wait_ready(runtime: RunningRuntime, route: str) -> None:
    try:
        wait_ready(runtime, route)
    except RuntimeNotReady as exc:
        pytest.fail(str(exc))


def _name_prefix(family: str) -> str:
    return f"fleet-test-{family}-{SESSION_ID}"


def _labels(family: str) -> dict[str, str]:
    return {SESSION_LABEL: SESSION_ID, "fleet.test_runtime": family}


def _start(engine, family: str, image: str, *, files: dict[str, str] | None = None) -> RunningRuntime:
    try:
        return start_container(engine, family, image, name_prefix=_name_prefix(family), labels=_labels(family),
                               files=files)
    except RuntimeImageMissing as exc:
        need_service(False, str(exc))


@contextmanager
def _openclaw(docker_engine, fake_model, started: RunningRuntime | None = None):
    """An OpenClaw using `fake_model`: `started` (ahead, ready and configured) or a new one."""
    runtime = started or _start(docker_engine, "openclaw", OPENCLAW_IMAGE)
    try:
        if started is None:
            _wait_ready(runtime, READY_ROUTE["openclaw"])
            openclaw_use_model(runtime, fake_model)
        yield runtime
    finally:
        stop_container(runtime)


CURRENT_ITEM = pytest.StashKey()  # the test being set up: where the session is in its run plan


@pytest.hookimpl(tryfirst=True)  # before its fixtures are set up
def pytest_runtest_setup(item):
    item.config.stash[CURRENT_ITEM] = item


def _current_item(request):
    return request.config.stash.get(CURRENT_ITEM, None)


def _preboot_enabled(config) -> bool:
    # The next module is known only when the engine's modules run in order on one process:
    # without xdist, or under --dist loadgroup (tests/conftest.py).
    return config.getoption("dist", "no") in ("no", "loadgroup")


@pytest.fixture(scope="session")
def openclaw_preboot(request):
    """The OpenClaw started ahead for the next module that needs one (tests/infra/runtime_preboot.py):
    one for the session, shared by every module's `fake_model` and `openclaw_runtime`, because
    what it starts during one module is bound to the fake model the next module will get."""
    plan = RunPlan(request.session.items) if _preboot_enabled(request.config) else None
    preboot = OpenClawPreboot(plan, name_prefix=_name_prefix("openclaw"), labels=_labels("openclaw"))
    yield preboot
    preboot.close()


@contextmanager
def _hermes(docker_engine, fake_model):
    runtime = _start(docker_engine, "hermes", HERMES_IMAGE, files={"/state/config.yaml": hermes_config(fake_model)})
    try:
        _wait_ready(runtime, READY_ROUTE["hermes"])
        yield runtime
    finally:
        stop_container(runtime)


@pytest.fixture(scope="session")
def shared_fake_model():
    """The fake model of the runtimes modules share (SHARES_RUNTIMES)."""
    model = FakeModel().start()
    yield model
    model.stop()


@pytest.fixture(scope="module")
def fake_model(request, openclaw_preboot):
    """One fake model per test module (the runtimes that use it are module-scoped too), or the
    session's when the module shares its runtimes. Created ahead with the module's OpenClaw when
    that was started during the previous module."""
    if getattr(request.module, "SHARES_RUNTIMES", False):
        yield request.getfixturevalue("shared_fake_model")
        return
    model = openclaw_preboot.take_model(_current_item(request)) or FakeModel().start()
    yield model
    model.stop()


@pytest.fixture(scope="session")
def shared_openclaw_runtime(docker_engine, shared_fake_model):
    with _openclaw(docker_engine, shared_fake_model) as runtime:
        yield runtime


@pytest.fixture(scope="session")
def shared_hermes_runtime(docker_engine, shared_fake_model):
    with _hermes(docker_engine, shared_fake_model) as runtime:
        yield runtime


# Each runtime fixture starts the next module's OpenClaw once its own runtime is ready, so the
# two starts do not compete for the CPU.

@pytest.fixture(scope="module")
def openclaw_runtime(request, docker_engine, docker_engine_url, fake_model, openclaw_preboot):
    item = _current_item(request)
    if getattr(request.module, "SHARES_RUNTIMES", False):
        runtime = request.getfixturevalue("shared_openclaw_runtime")
        openclaw_preboot.start_after(item, docker_engine_url)
        yield runtime
        return
    with _openclaw(docker_engine, fake_model, openclaw_preboot.take_runtime(item, fake_model)) as runtime:
        openclaw_preboot.start_after(item, docker_engine_url)
        yield runtime


@pytest.fixture(scope="module")
def hermes_runtime(request, docker_engine, docker_engine_url, fake_model, openclaw_preboot):
    item = _current_item(request)
    if getattr(request.module, "SHARES_RUNTIMES", False):
        runtime = request.getfixturevalue("shared_hermes_runtime")
        openclaw_preboot.start_after(item, docker_engine_url)
        yield runtime
        return
    with _hermes(docker_engine, fake_model) as runtime:
        openclaw_preboot.start_after(item, docker_engine_url)
        yield runtime
