"""What an agent's workload is made of: image, environment, labels and limits (a WorkloadSpec)."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from ..backends.base import GATEWAY_PORT, LABEL_AGENT_ID, LABEL_MANAGED, WorkloadSpec
from ..deploy_progress import deploy_step_set
from ..families import family_of
from ..internal_url import fleet_internal_url
from ..models import Agent

logger = logging.getLogger(__name__)

# Apps above agents add variables to every new workload without agents importing them:
# integrations registers its credentials' environment here from its AppConfig.ready().
WorkloadEnvContributor = Callable[[Agent], dict[str, str]]
_env_contributors: dict[str, WorkloadEnvContributor] = {}


def register_workload_env(name: str, contributor: WorkloadEnvContributor) -> None:
    """Add (or replace, by `name`) a contributor of environment variables for new workloads."""
    _env_contributors[name] = contributor


def unregister_workload_env(name: str) -> None:
    _env_contributors.pop(name, None)


def contributed_env(agent: Agent) -> dict[str, str]:
    """What the registered contributors add, in registration order. A contributor that fails
    is logged and skipped: a broken integration must not stop the agent from deploying."""
    env: dict[str, str] = {}
    for name, contributor in list(_env_contributors.items()):
        try:
            env.update({str(k): str(v) for k, v in (contributor(agent) or {}).items()})
        except Exception:
            logger.exception("Workload environment contributor %r failed for agent %s", name, agent.pk)
    return env


@dataclass(frozen=True)
class ConfigurationWarning:
    problem: str
    remedy: str

    @property
    def sentence(self) -> str:
        return f"{self.problem} {self.remedy}"


def internal_url_warning() -> ConfigurationWarning | None:
    """Why bridged workloads cannot reach Fleet as configured, or None: the default
    FLEET_INTERNAL_URL of a bridge (host.docker.internal, the bridge's gateway) names an address
    the web server does not listen on when BIND_ADDRESS holds only loopback addresses."""
    if settings.FLEET_INTERNAL_URL or settings.DOCKER_NETWORK_MODE == "host":
        return None
    addresses = [address.strip() for address in settings.BIND_ADDRESS.split(",") if address.strip()]
    if not addresses or not all(_is_loopback(address) for address in addresses):
        return None
    return ConfigurationWarning(
        problem=(f"Bridged agents report their usage to {fleet_internal_url()} (DOCKER_NETWORK_MODE="
                 f"{settings.DOCKER_NETWORK_MODE}, FLEET_INTERNAL_URL unset), the Docker bridge's gateway, but the "
                 f"web server listens on {', '.join(addresses)} only (BIND_ADDRESS): those reports cannot arrive."),
        remedy=("Set BIND_ADDRESS to the bridge's gateway (usually 172.17.0.1; the host reaches it too) or to "
                "0.0.0.0 behind a firewall, or set FLEET_INTERNAL_URL to an address of Fleet the agents can reach."),
    )


def _is_loopback(address: str) -> bool:
    host = address.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may well be reachable


def usage_url(agent: Agent) -> str:
    return f"{fleet_internal_url()}/api/agents/{agent.pk}/usage"


def runtime_image(runtime_family: str) -> str:
    return getattr(settings, family_of(runtime_family).image_setting)


def runtime_env(agent: Agent, *, usage_token: str, gateway_port: int = GATEWAY_PORT) -> dict[str, str]:
    """The runtime's own variables (its fixed settings, where its state is, gateway secret and
    port) plus the usage ingest URL and token."""
    family = family_of(agent.runtime_family)
    env = {**family.fixed_env, **family.state_env, family.token_variable: str(agent.gateway_token),
           family.port_variable: str(gateway_port)}
    env["FLEET_AGENT_ID"] = str(agent.pk)
    env["FLEET_USAGE_URL"] = usage_url(agent)
    env["FLEET_USAGE_TOKEN"] = usage_token
    return env


def workload_labels(agent: Agent) -> dict[str, str]:
    return {LABEL_AGENT_ID: str(agent.pk), LABEL_MANAGED: "true"}


def workload_name(agent: Agent) -> str:
    return f"fleet-agent-{agent.pk.hex[:12]}"


def workload_spec_build(*, agent: Agent, usage_token: str) -> WorkloadSpec:
    return WorkloadSpec(
        agent_id=str(agent.pk),
        name=agent.container_name or workload_name(agent),
        runtime_family=agent.runtime_family,
        image=runtime_image(agent.runtime_family),
        # The runtime's own variables win over contributed ones (no integration can replace
        # the gateway token or the usage endpoint).
        env={**contributed_env(agent), **runtime_env(agent, usage_token=usage_token)},
        labels=workload_labels(agent),
        vcpu=agent.vcpu,
        ram_mb=agent.ram_mb,
        disk_gb=agent.disk_gb,
        gateway_port=GATEWAY_PORT,
        on_step=lambda step: deploy_step_set(agent.pk, step),
    )
