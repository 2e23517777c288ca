"""Starting the real runtime images through the real Docker backend, for the runtime tests."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

import docker
import requests
from django.test import override_settings

from agents.backends.docker import DockerBackend
from agents.backends.docker_engine import state_volume_name
from agents.images.build import built_digest
from agents.images.catalog import RECIPES
from tests.agents.backends.support import FakeAgent, spec_for
from tests.infra.docker import SESSION_ID, SESSION_LABEL, exec_in
from tests.support import need_service

IMAGE_VARIABLES = {"openclaw": "FLEET_TEST_OPENCLAW_IMAGE", "hermes": "FLEET_TEST_HERMES_IMAGE"}
TOKEN_VARIABLES = {"openclaw": "OPENCLAW_GATEWAY_TOKEN", "hermes": "API_SERVER_KEY"}
RAM_MB = {"openclaw": 2048, "hermes": 1024}  # OpenClaw idles near 800 MB (RUNTIMES.md)
LISTEN = "0A"  # a listening socket's state in /proc/net/tcp


def runtime_image(engine: docker.DockerClient, family: str) -> str:
    """The image to test: the variable's, or the recipe's tag built from the current recipe."""
    recipe = RECIPES[family]
    image = os.environ.get(IMAGE_VARIABLES[family]) or recipe.tag
    digest = built_digest(engine, image)
    hint = "run: manage.py build_runtime_images --docker-host $FLEET_TEST_DOCKER_HOST (or .ci/runtime-images.sh)"
    need_service(digest is not None, f"{image} is not on the test engine; {hint}")
    if image == recipe.tag:
        need_service(digest == recipe.digest(), f"{image} was built from an older recipe; {hint}")
    return image


@dataclass
class Runtime:
    family: str
    agent: FakeAgent
    backend: DockerBackend
    token: str
    engine: docker.DockerClient

    @property
    def port(self) -> int:
        return self.agent.gateway_host_port

    @property
    def container(self):
        return self.engine.containers.get(self.agent.container_id)

    @property
    def volume_name(self) -> str:
        return state_volume_name(self.agent.id)

    def get(self, path: str, **kwargs) -> requests.Response:
        return requests.get(f"http://127.0.0.1:{self.port}{path}", timeout=5, **kwargs)

    def answers(self, path: str, status: int = 200) -> bool:
        try:
            return self.get(path).status_code == status
        except requests.RequestException:
            return False

    def sh(self, command: str) -> tuple[int, str]:
        result = exec_in(self.container, ["sh", "-c", command])
        return result.exit_code, result.output.decode().strip()

    def listening_addresses(self) -> set[str]:
        """The addresses the gateway port listens on, as /proc/net/tcp{,6} spell them
        (00000000: all IPv4, 0100007F: 127.0.0.1). Host network: the host's sockets."""
        _, table = self.sh("cat /proc/net/tcp /proc/net/tcp6")
        suffix = f":{self.port:04X}"
        found = set()
        for line in table.splitlines():
            fields = line.split()
            if len(fields) > 3 and fields[1].endswith(suffix) and fields[3] == LISTEN:
                found.add(fields[1].rsplit(":", 1)[0])
        return found


def start_runtime(engine_url: str, engine: docker.DockerClient, family: str, image: str, **env: str) -> Runtime:
    """One agent of `family` deployed by the DockerBackend on the host network."""
    backend = DockerBackend(host=engine_url, network_mode="host")
    agent = FakeAgent(runtime_family=family)
    token = secrets.token_urlsafe(32)
    spec = spec_for(agent, image=image, vcpu=1, ram_mb=RAM_MB[family], env={TOKEN_VARIABLES[family]: token, **env})
    # This session's label on the container and the volume: a crashed session's are cleaned up.
    with override_settings(DOCKER_CONTAINER_LABELS={SESSION_LABEL: SESSION_ID}):
        agent.place(backend.create(agent, spec))
    return Runtime(family=family, agent=agent, backend=backend, token=token, engine=engine)
