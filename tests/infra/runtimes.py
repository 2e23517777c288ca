"""A real OpenClaw and a real Hermes for tests: containers of the runtime images on the test engine.

    pytestmark = pytest.mark.runtime

    def test_it(openclaw_runtime, db):
        agent = openclaw_runtime.agent()        # an Agent row whose gateway is that container
        assert gateway_for(agent).handshake().version == "2026.9.6"

One container per family and test module (OpenClaw takes about 10 s and 800 MB to start), on the
host network, listening on a free loopback port (FLEET_GATEWAY_BIND=loopback), with a fresh
random token. Both use the module's `fake_model`: Hermes through $HERMES_HOME/config.yaml,
copied in before it starts; OpenClaw through config.patch once it is ready (its provider
`fake`, priced at 1 USD per million input tokens and 2 per million output tokens, and the
default agent model `fake/<model>`).

The images (AGENT_IMAGE_OPENCLAW/HERMES' defaults, built by `manage.py build_runtime_images`
and by CI) must be on the engine: without them the tests skip, and fail under CI=true.
Containers carry the Docker fixture's session label, so a crashed session's are removed by
the next one.
"""

from __future__ import annotations

import io
import secrets
import socket
import tarfile
import time
from dataclasses import dataclass, field

import pytest
import requests
from docker import errors as docker_errors

from agents.gateway import Endpoint, OpenClawGateway, family_of
from agents.gateway.device import DeviceIdentity
from tests.support import need_service
from tests.infra.docker import SESSION_ID, SESSION_LABEL

OPENCLAW_IMAGE = "fleet/openclaw:2026.9.6"
HERMES_IMAGE = "fleet/hermes:0.19.0"
RUNTIME_UID = 10001  # the images run as this user; files copied in must be theirs
FAKE_PROVIDER = "fake"
PRICE_PER_MILLION = {"input": 1.0, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0}
START_TIMEOUT = {"openclaw": 90.0, "hermes": 45.0}  # measured: ready after ~10 s and ~2 s


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RunningRuntime:
    family: str
    port: int
    token: str = field(repr=False)
    container: object = field(repr=False)
    version: str

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def endpoint(self, *, token: str | None = None) -> Endpoint:
        return Endpoint(family=family_of(self.family), scheme="http", host="127.0.0.1", port=self.port,
                        token=self.token if token is None else token, agent_id=f"test-{self.family}")

    def agent(self, **fields):
        """A running, provisioned-looking Agent whose gateway is this runtime (needs `db`)."""
        from tests.factories.agents import AgentFactory

        fields.setdefault("gateway_token", self.token)
        return AgentFactory(runtime_family=self.family, status="running", gateway_host_port=self.port, **fields)

    def logs(self) -> str:
        text = self.container.logs(tail=40).decode(errors="replace")
        return text.replace(self.token, "[token]")


def _image_present(engine, image: str) -> bool:
    try:
        engine.images.get(image)
        return True
    except docker_errors.ImageNotFound:
        return False


def _put_file(container, path: str, content: str) -> None:
    """Copy one file into a created container, owned by the runtime's user, mode 600."""
    data = content.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(path.rsplit("/", 1)[1])
        info.size, info.mode, info.uid, info.gid = len(data), 0o600, RUNTIME_UID, RUNTIME_UID
        archive.addfile(info, io.BytesIO(data))
    container.put_archive(path.rsplit("/", 1)[0], buffer.getvalue())


def _wait_ready(runtime: RunningRuntime, route: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT[runtime.family]
    while time.monotonic() < deadline:
        runtime.container.reload()
        if runtime.container.status == "exited":
            pytest.fail(f"the {runtime.family} container exited while starting:\n{runtime.logs()}")
        try:
            if requests.get(runtime.base_url + route, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.25)
    pytest.fail(f"{runtime.family} was not ready within {START_TIMEOUT[runtime.family]:g} s:\n{runtime.logs()}")


def _start(engine, family: str, image: str, *, files: dict[str, str] | None = None) -> RunningRuntime:
    need_service(_image_present(engine, image),
                 f"the runtime image {image} is not on the test engine; build it (manage.py build_runtime_images)")
    spec = family_of(family)
    port, token = free_loopback_port(), secrets.token_urlsafe(32)
    container = engine.containers.create(
        image,
        name=f"fleet-test-{family}-{SESSION_ID}-{port}",
        environment={**spec.fixed_env, spec.token_variable: token, spec.port_variable: str(port),
                     "FLEET_GATEWAY_BIND": "loopback"},
        labels={SESSION_LABEL: SESSION_ID, "fleet.test_runtime": family},
        network_mode="host",
        detach=True,
    )
    for path, content in (files or {}).items():
        _put_file(container, path, content)
    container.start()
    version = engine.images.get(image).labels.get("fleet.runtime_version", "")
    return RunningRuntime(family=family, port=port, token=token, container=container, version=version)


def _stop(runtime: RunningRuntime) -> None:
    try:
        runtime.container.remove(force=True, v=True)
    except docker_errors.NotFound:
        pass


def openclaw_model_patch(fake_model) -> dict:
    """The config.patch that makes the fake model OpenClaw's priced default model."""
    return {
        "models": {"providers": {FAKE_PROVIDER: {
            "baseUrl": fake_model.base_url, "apiKey": "sk-fake-local", "api": "openai-completions",
            "models": [{"id": fake_model.model_id, "name": "Fleet fake", "contextWindow": 32000,
                        "maxTokens": 1024, "cost": PRICE_PER_MILLION}],
        }}},
        "agents": {"defaults": {"model": {"primary": f"{FAKE_PROVIDER}/{fake_model.model_id}"}}},
    }


def hermes_config(fake_model) -> str:
    return (
        "model:\n"
        "  provider: custom\n"
        f"  default: {fake_model.model_id}\n"
        f"  base_url: {fake_model.base_url}\n"
        "  api_key: sk-fake-local\n"
    )


@pytest.fixture(scope="module")
def openclaw_runtime(docker_engine, fake_model):
    runtime = _start(docker_engine, "openclaw", OPENCLAW_IMAGE)
    try:
        _wait_ready(runtime, "/readyz")
        # A throwaway device: the fixture has no database, and loopback backends need no pairing.
        OpenClawGateway(runtime.endpoint(), DeviceIdentity.generate()).config_patch(openclaw_model_patch(fake_model))
        yield runtime
    finally:
        _stop(runtime)


@pytest.fixture(scope="module")
def hermes_runtime(docker_engine, fake_model):
    runtime = _start(docker_engine, "hermes", HERMES_IMAGE, files={"/state/config.yaml": hermes_config(fake_model)})
    try:
        _wait_ready(runtime, "/health")
        yield runtime
    finally:
        _stop(runtime)
