"""The real runtime images (fleet/openclaw, fleet/hermes) started by the real Docker backend.

One container per image for the whole module: OpenClaw takes about 10 s and 800 MB to come
up, Hermes about 2 s. The images come from `manage.py build_runtime_images` (.ci/run builds
them); without them these tests skip, or fail under CI=true.
"""

from __future__ import annotations

import io
import json
import time

import pytest
from django.core.management import call_command
from docker import errors as docker_errors

from agents.images.catalog import RECIPES
from agents.images.rootfs import RUNTIME_UID
from tests.agents.runtimes.support import Runtime, runtime_image, start_runtime
from tests.infra.docker import SESSION_ID, SESSION_LABEL
from tests.support import wait_until

pytestmark = pytest.mark.docker

OPENCLAW_READY_WITHIN = 90  # seconds; measured 9-16 s on a busy 2-core machine, 42 s and more when it ran at half speed
LOOPBACK_IPV4, LOOPBACK_IPV6 = "0100007F", "00000000000000000000000001000000"


def _stop(runtime: Runtime) -> None:
    try:
        runtime.backend.remove(runtime.agent)
    except Exception:  # noqa: BLE001 - the module's container cleanup is the backstop
        pass


@pytest.fixture(scope="module")
def openclaw(docker_engine_url, docker_engine):
    image = runtime_image(docker_engine, "openclaw")
    runtime = start_runtime(docker_engine_url, docker_engine, "openclaw", image)
    try:
        wait_until(lambda: runtime.answers("/readyz"), timeout=OPENCLAW_READY_WITHIN, interval=0.25)
        yield runtime
    finally:
        _stop(runtime)


@pytest.fixture(scope="module")
def hermes(docker_engine_url, docker_engine):
    image = runtime_image(docker_engine, "hermes")
    # Loopback here, the default (all interfaces) for OpenClaw: both bind choices get run.
    runtime = start_runtime(docker_engine_url, docker_engine, "hermes", image)
    try:
        wait_until(lambda: runtime.answers("/health"), timeout=30, interval=0.2)
        yield runtime
    finally:
        _stop(runtime)


# -- OpenClaw ------------------------------------------------------------------------------


def test_openclaw_is_live_ready_and_reports_its_version(openclaw):
    assert openclaw.get("/healthz").json() == {"ok": True, "status": "live"}
    ready = openclaw.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    startup = openclaw.get("/startupz").json()
    assert (startup["status"], startup["version"]) == ("started", "2026.9.6")


def test_openclaw_seeds_a_config_that_keeps_it_offline_in_its_state_volume(openclaw):
    status, raw = openclaw.sh("cat /state/openclaw.json")
    assert status == 0
    config = json.loads(raw)
    assert config["models"]["catalogRefresh"]["enabled"] is False
    assert config["update"]["checkOnStart"] is False
    assert config["logging"]["file"].startswith("/state/")
    # config.patch replaces the file by renaming a new one onto it: file and folder writable.
    assert openclaw.sh("test -w /state/openclaw.json && test -w /state && id -u") == (0, str(RUNTIME_UID))
    mounts = openclaw.container.attrs["Mounts"]
    assert [(m["Name"], m["Destination"]) for m in mounts] == [(openclaw.volume_name, "/state")]


def test_openclaw_listens_on_loopback_only_on_a_local_engines_host_network(openclaw):
    assert openclaw.listening_addresses() == {LOOPBACK_IPV4, LOOPBACK_IPV6}  # the backend's FLEET_GATEWAY_BIND


@pytest.mark.parametrize(("plugin", "version"), [("whatsapp", "2026.9.6"), ("feishu", "2026.9.5"),
                                                  ("zalouser", "2026.9.4")])
def test_openclaw_has_the_channel_plugins(openclaw, plugin, version):
    status, raw = openclaw.sh(f"cat /opt/openclaw/node_modules/@openclaw/{plugin}/package.json")
    assert status == 0 and json.loads(raw)["version"] == version


def test_openclaw_has_a_shell(openclaw):
    # /bin/sh is bash (the exec tool needs one); `#!/usr/bin/env node` scripts find Node 24.
    assert openclaw.sh('echo "bash ${BASH_VERSION%%.*}"; env node --version') == (0, "bash 5\nv24.21.0")


def test_openclaw_never_logs_its_gateway_token(openclaw):
    assert openclaw.token not in openclaw.container.logs().decode(errors="replace")
    assert openclaw.sh(f"grep -rl -- '{openclaw.token}' /state/logs || true") == (0, "")


def test_a_bind_choice_other_than_lan_or_loopback_stops_the_entrypoint(docker_engine):
    image = runtime_image(docker_engine, "openclaw")
    container = docker_engine.containers.run(
        image, detach=True, network_mode="host", environment={"FLEET_GATEWAY_BIND": "public"},
        labels={"fleet.managed": "true", SESSION_LABEL: SESSION_ID},
    )
    try:
        assert container.wait(timeout=30)["StatusCode"] == 64
        assert "FLEET_GATEWAY_BIND must be lan or loopback" in container.logs().decode()
    finally:
        container.remove(force=True, v=True)


# -- Hermes --------------------------------------------------------------------------------


def test_hermes_health_reports_its_version(hermes):
    assert hermes.get("/health").json() == {"status": "ok", "platform": "hermes-agent", "version": "0.19.0"}


def test_hermes_api_needs_the_agents_bearer_key(hermes):
    assert hermes.get("/v1/models").status_code == 401
    assert hermes.get("/v1/models", headers={"Authorization": "Bearer not-the-key-at-all"}).status_code == 401
    allowed = hermes.get("/v1/models", headers={"Authorization": f"Bearer {hermes.token}"})
    assert allowed.status_code == 200 and allowed.json()["object"] == "list"


def test_hermes_listens_on_loopback_only_on_a_local_engines_host_network(hermes):
    assert hermes.listening_addresses() == {LOOPBACK_IPV4}


def test_hermes_never_logs_its_api_key(hermes):
    assert hermes.token not in hermes.container.logs().decode(errors="replace")


def test_the_build_command_skips_images_built_from_the_current_recipe(docker_engine_url, hermes):
    if hermes.container.image.tags != [RECIPES["hermes"].tag]:
        pytest.skip("FLEET_TEST_HERMES_IMAGE names another image than the recipe's")
    out = io.StringIO()
    started = time.monotonic()
    call_command("build_runtime_images", "hermes", "--docker-host", docker_engine_url, stdout=out, stderr=io.StringIO())
    assert f"{RECIPES['hermes'].tag} is up to date" in out.getvalue()
    assert time.monotonic() - started < 10


# Last in the module: it removes the Hermes agent the tests above share.
def test_hermes_state_volume_survives_a_restart_and_goes_with_the_agent(hermes, docker_engine):
    assert hermes.sh("echo kept >/state/marker") == (0, "")
    before = hermes.container.attrs["State"]["StartedAt"]

    hermes.backend.restart(hermes.agent)
    wait_until(lambda: hermes.answers("/health"), timeout=30, interval=0.2)

    assert hermes.container.attrs["State"]["StartedAt"] != before
    assert hermes.sh("cat /state/marker") == (0, "kept")
    assert hermes.sh("test -f /state/state.db")[0] == 0  # Hermes's own state is there too
    volume = docker_engine.volumes.get(hermes.volume_name)
    assert volume.attrs["Labels"]["fleet.agent_id"] == hermes.agent.id

    hermes.backend.remove(hermes.agent)
    with pytest.raises(docker_errors.NotFound):
        docker_engine.volumes.get(hermes.volume_name)
    with pytest.raises(docker_errors.NotFound):
        docker_engine.containers.get(hermes.agent.container_id)
