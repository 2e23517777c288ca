"""Where an agent's workload reaches Fleet: its usage reports and, with `modelRouting: gateway`,
its model calls. Below the agent services, so the model writer (llm_model) and the workload
builder (services.workload) read one rule."""

from __future__ import annotations

from django.conf import settings

# The name a bridged container reaches its Docker host by (the container gets an extra_hosts
# entry "host.docker.internal:host-gateway", agents.backends.docker.hardening_options).
DOCKER_HOST_GATEWAY_NAME = "host.docker.internal"
# Fleet's model gateway (the model_gateway app serves it): OpenAI and Anthropic wire formats under it.
MODEL_GATEWAY_PATH = "/llm/v1"


def fleet_internal_url() -> str:
    """FLEET_INTERNAL_URL, else a default that follows the network mode of the engine's
    containers and the port Fleet serves on (FLEET_PORT): on the host network the container
    shares the host's loopback (http://127.0.0.1:<port>); on a bridge it reaches the host
    through the bridge gateway, by the name host.docker.internal."""
    if settings.FLEET_INTERNAL_URL:
        return settings.FLEET_INTERNAL_URL.rstrip("/")
    host = "127.0.0.1" if settings.DOCKER_NETWORK_MODE == "host" else DOCKER_HOST_GATEWAY_NAME
    return f"http://{host}:{settings.FLEET_PORT}"


def model_gateway_url() -> str:
    """The base URL a runtime with `modelRouting: gateway` is given as its model provider's."""
    return f"{fleet_internal_url()}{MODEL_GATEWAY_PATH}"
