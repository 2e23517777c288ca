"""A real OpenClaw or Hermes in a container on a Docker engine, wired to a fake model, without
pytest: the runtime fixtures (tests/infra/runtimes.py) and the benchmarks (bench/edge.py) both
start them this way.

On the host network, listening on a free loopback port (FLEET_GATEWAY_BIND=loopback), with a
fresh random token. Hermes reads its model from $HERMES_HOME/config.yaml, copied in before it
starts (`hermes_config`); OpenClaw gets it through config.patch once it is ready
(`openclaw_model_patch`: its provider `fake`, priced at 1 USD per million input tokens and 2 per
million output tokens, and the default agent model `fake/<model>`).

A missing image raises RuntimeImageMissing, a runtime that does not come up RuntimeNotReady:
the fixtures turn them into a skip or a failure, a benchmark into its error.
"""

from __future__ import annotations

import io
import secrets
import tarfile
import time
from dataclasses import dataclass, field

import requests
from docker import errors as docker_errors

from agents.gateway import Endpoint, OpenClawGateway, family_of
from agents.gateway.device import DeviceIdentity
from tests.support import free_loopback_port

OPENCLAW_IMAGE = "fleet/openclaw:2026.9.6"
HERMES_IMAGE = "fleet/hermes:0.19.0"
RUNTIME_UID = 10001  # the images run as this user; files copied in must be theirs
FAKE_PROVIDER = "fake"
PRICE_PER_MILLION = {"input": 1.0, "output": 2.0, "cacheRead": 0.0, "cacheWrite": 0.0}
START_TIMEOUT = {"openclaw": 90.0, "hermes": 45.0}  # measured: ready after ~10 s and ~2 s
READY_ROUTE = {"openclaw": "/readyz", "hermes": "/health"}


class RuntimeImageMissing(Exception):
    pass


class RuntimeNotReady(Exception):
    pass


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
        """A running, provisioned-looking Agent whose gateway is this runtime (tests: needs `db`)."""
        from tests.factories.agents import AgentFactory

        fields.setdefault("gateway_token", self.token)
        return AgentFactory(runtime_family=self.family, status="running", gateway_host_port=self.port, **fields)

    def logs(self) -> str:
        text = self.container.logs(tail=40).decode(errors="replace")
        return text.replace(self.token, "[token]")


def image_present(engine, image: str) -> bool:
    try:
        engine.images.get(image)
        return True
    except docker_errors.ImageNotFound:
        return False


def put_file(container, path: str, content: str) -> None:
    """Copy one file into a created container, owned by the runtime's user, mode 600."""
    data = content.encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(path.rsplit("/", 1)[1])
        info.size, info.mode, info.uid, info.gid = len(data), 0o600, RUNTIME_UID, RUNTIME_UID
        archive.addfile(info, io.BytesIO(data))
    container.put_archive(path.rsplit("/", 1)[0], buffer.getvalue())


def wait_ready(runtime: RunningRuntime, route: str) -> None:
    """Until `route` answers 200; RuntimeNotReady if the container exits or the time is up."""
    deadline = time.monotonic() + START_TIMEOUT[runtime.family]
    while time.monotonic() < deadline:
        runtime.container.reload()
        if runtime.container.status == "exited":
            raise RuntimeNotReady(f"the {runtime.family} container exited while starting:\n{runtime.logs()}")
        try:
            if requests.get(runtime.base_url + route, timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.25)
    raise RuntimeNotReady(
        f"{runtime.family} was not ready within {START_TIMEOUT[runtime.family]:g} s:\n{runtime.logs()}")


def start_container(engine, family: str, image: str, *, name_prefix: str, labels: dict[str, str],
                    files: dict[str, str] | None = None) -> RunningRuntime:
    """The runtime's container, started (not yet ready), named `<name_prefix>-<port>`."""
    if not image_present(engine, image):
        raise RuntimeImageMissing(
            f"the runtime image {image} is not on the test engine; build it (manage.py build_runtime_images)")
    spec = family_of(family)
    port, token = free_loopback_port(), secrets.token_urlsafe(32)
    container = engine.containers.create(
        image,
        name=f"{name_prefix}-{port}",
        environment={**spec.fixed_env, spec.token_variable: token, spec.port_variable: str(port),
                     "FLEET_GATEWAY_BIND": "loopback"},
        labels=labels,
        network_mode="host",
        detach=True,
    )
    for path, content in (files or {}).items():
        put_file(container, path, content)
    container.start()
    version = engine.images.get(image).labels.get("fleet.runtime_version", "")
    return RunningRuntime(family=family, port=port, token=token, container=container, version=version)


def stop_container(runtime: RunningRuntime) -> None:
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


def openclaw_use_model(runtime: RunningRuntime, fake_model) -> None:
    # A throwaway device: no database is needed, and loopback backends need no pairing.
    OpenClawGateway(runtime.endpoint(), DeviceIdentity.generate()).config_patch(openclaw_model_patch(fake_model))


def hermes_config(fake_model) -> str:
    return (
        "model:\n"
        "  provider: custom\n"
        f"  default: {fake_model.model_id}\n"
        f"  base_url: {fake_model.base_url}\n"
        "  api_key: sk-fake-local\n"
    )
