"""What the backend tests share: a stand-in agent (the backend reads only these attributes, so
the tests need no Agent model or database) and small waits."""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field

from django.conf import settings

from agents.backends.base import Placement, WorkloadSpec

MB = 1024 * 1024


@dataclass
class FakeAgent:
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    container_id: str = ""
    container_name: str = ""
    gateway_host_port: int | None = None
    runtime_family: str = "openclaw"
    execution_target_id: str = "docker"

    def place(self, placement: Placement) -> FakeAgent:
        """Record a placement the way provisioning stores it on the agent row."""
        self.container_id = placement.container_id
        self.container_name = placement.container_name
        self.gateway_host_port = placement.host_port
        return self


def spec_for(agent: FakeAgent, **overrides) -> WorkloadSpec:
    image = settings.AGENT_IMAGE_HERMES if agent.runtime_family == "hermes" else settings.AGENT_IMAGE_OPENCLAW
    token_variable = "API_SERVER_KEY" if agent.runtime_family == "hermes" else "OPENCLAW_GATEWAY_TOKEN"
    values = {
        "agent_id": agent.id,
        "name": f"fleet-test-{agent.id[:12]}",
        "runtime_family": agent.runtime_family,
        "image": image,
        "env": {token_variable: uuid.uuid4().hex, "FLEET_USAGE_TOKEN": uuid.uuid4().hex},
        "labels": {"fleet.test_case": "backend"},
        "vcpu": 0.5,
        "ram_mb": 128,
        "disk_gb": 1,
    }
    return WorkloadSpec(**{**values, **overrides})


def http_get(port: int, path: str) -> tuple[int, str] | None:
    """(status, body) from the runtime on 127.0.0.1:port, or None when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return response.status, response.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def answers_health(port: int) -> bool:
    reply = http_get(port, "/health")
    return reply is not None and reply[0] == 200
