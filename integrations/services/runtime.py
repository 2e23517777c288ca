"""The integrations' desired state in a runtime, and applying it.

- At creation: `workload_env` (registered with agents.services.workload) gives a new workload
  the variables of every active integration of its agent.
- `integration_sync` pushes the variables to a running agent now: OpenClaw through
  `config.patch` of `env.vars` with the hash `config.get` gave; Hermes through its
  `$HERMES_HOME/.env`, which it re-reads at every turn, so neither is restarted.
- `runtime_state_apply(include_mcp=True)` runs when the runtime comes up (agent.running,
  agent.started, agent.restarted): the same variables plus the stdio MCP servers of the
  integrations with `mcpEnabled` under `mcp.servers` (OpenClaw), so a redeploy carries them.

Fleet owns the variable names of the catalog and the MCP servers named `fleet-<provider>`:
names of those that no integration sets any more are removed; nothing else is touched.
Applying the same state twice changes nothing.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from agents.files.dotenv import env_block_write
from agents.gateway import family_of, gateway_for
from agents.models import Agent

from .. import catalog
from ..errors import SyncUnsupported
from ..fields import env_of, stored_config, value_of
from ..models import Integration, IntegrationStatus

MCP_PREFIX = "fleet-"
logger = logging.getLogger(__name__)

ENV_BLOCK = "integrations"  # Fleet's block of the integrations in Hermes's .env (agents.files.dotenv)


@dataclass
class SyncResult:
    runtime: str
    env_vars: list[str]  # every variable the agent's integrations set now
    changed: list[str] = field(default_factory=list)  # added or updated
    removed: list[str] = field(default_factory=list)
    mcp_servers: list[str] = field(default_factory=list)
    restart_required: bool = False

    @property
    def success(self) -> bool:
        return True


def _active(agent: Agent):
    return Integration.objects.filter(agent=agent, status=IntegrationStatus.ACTIVE).order_by("created_at", "id")


def desired_env(agent: Agent) -> dict[str, str]:
    """The variables of the agent's active integrations (later connections win a clash)."""
    env: dict[str, str] = {}
    for integration in _active(agent):
        entry = catalog.provider(integration.provider)
        if entry is not None:
            env.update(env_of(entry, stored_config(integration)))
    return env


def workload_env(agent: Agent) -> dict[str, str]:
    """The contributor registered with agents.services.workload (new workloads' environment)."""
    return desired_env(agent)


_PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")


def _fill(template: str, entry: dict, split) -> str:
    return _PLACEHOLDER.sub(lambda m: str(value_of(entry, split, m.group(1)) or ""), template)


def desired_mcp_servers(agent: Agent) -> dict[str, dict]:
    """`mcp.servers` entries of the active integrations with mcpEnabled: stdio, credentials in env."""
    servers = {}
    for integration in _active(agent).filter(mcp_enabled=True):
        entry = catalog.provider(integration.provider)
        spec = entry and entry.get("mcp")
        if not spec:
            continue
        split = stored_config(integration)
        env = {}
        for name, source in spec["env"].items():
            value = _fill(source, entry, split) if "{" in source else value_of(entry, split, source)
            if value:
                env[name] = str(value)
        servers[f"{MCP_PREFIX}{entry['id']}"] = {
            "command": spec["command"], "args": [_fill(a, entry, split) for a in spec["args"]], "env": env,
        }
    return servers


def integration_sync(*, agent: Agent) -> SyncResult:
    """POST .../integrations/sync: the variables, now (409 agent_not_running unless it runs)."""
    return runtime_state_apply(agent=agent, include_mcp=False)


def runtime_state_apply(*, agent: Agent, include_mcp: bool) -> SyncResult:
    env_file = family_of(agent.runtime_family).env_file
    if env_file and agent.is_external:
        # Such a runtime takes variables from a file of its state folder, which only a
        # container Fleet runs gives it access to.
        raise SyncUnsupported("An adopted agent's environment file cannot be written by Fleet.")
    gateway = gateway_for(agent)  # AgentNotRunning unless running; the family's client
    env = desired_env(agent)
    if env_file:
        return _apply_env_file(agent, env, env_file)
    return _apply_config(agent, gateway, env, desired_mcp_servers(agent) if include_mcp else None)


# -- Runtimes that take variables by config (OpenClaw) ----------------------------------------


def _apply_config(agent: Agent, gateway, env: dict[str, str], servers: dict | None) -> SyncResult:
    current = gateway.config_get()
    config = current.get("config") or {}
    present = set(((config.get("env") or {}).get("vars") or {}).keys())
    stale = sorted((present & catalog.managed_env_names()) - set(env))
    patch: dict = {"env": {"vars": {**env, **{name: None for name in stale}}}}
    current_servers: set[str] = set()
    if servers is not None:
        current_servers = set(((config.get("mcp") or {}).get("servers") or {}).keys())
        gone = {name: None for name in current_servers if name.startswith(MCP_PREFIX) and name not in servers}
        if servers or gone:
            patch["mcp"] = {"servers": {**servers, **gone}}
    result = SyncResult(runtime=agent.runtime_family, env_vars=sorted(env), mcp_servers=sorted(servers or {}))
    if not env and not stale and "mcp" not in patch:
        return result  # nothing of ours in the config, nothing to add
    # A server's args may shrink or the server go: the runtime wants each such array named.
    replace = sorted(f"mcp.servers.{name}.args" for name in (patch.get("mcp") or {}).get("servers", {})
                     if name in current_servers)
    answer = gateway.config_patch(patch, base_hash=current.get("hash"), replace_paths=replace)
    paths = answer.get("changed_paths") or []
    changed = _changed_names(paths, "env.vars.")
    if "env.vars" in paths or "env" in paths:
        changed = set(env)  # the runtime named the whole block, not the variables in it
    result.removed = stale
    result.changed = sorted(name for name in changed if name in env)
    result.restart_required = bool(answer.get("requires_restart"))
    return result


def _changed_names(paths: list[str], prefix: str) -> set[str]:
    return {path[len(prefix):].split(".", 1)[0] for path in paths if path.startswith(prefix)}


# -- Runtimes that re-read an env file of their state (Hermes) --------------------------------


def _apply_env_file(agent: Agent, env: dict[str, str], env_file: str) -> SyncResult:
    changed, removed = env_block_write(agent, env_file, ENV_BLOCK, env)
    return SyncResult(runtime=agent.runtime_family, env_vars=sorted(env), changed=changed, removed=removed)
