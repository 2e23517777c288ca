"""Connecting, changing and removing an agent's integrations."""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction

from agents.events import agent_event
from agents.gateway import family_of
from agents.models import SERVING, Agent
from fleet.errors import NotFound, ValidationFailed
from fleet.task_queue import task_named

from .. import catalog
from ..errors import AlreadyConnected, McpUnsupported, OAuthRequired
from ..fields import SplitConfig, config_validate, stored_config, value_of
from ..models import Integration, IntegrationStatus

# The task (integrations.tasks) that calls runtime_state_apply.
APPLY_TASK = "integrations.apply_runtime_state"


def provider_entry(provider_id) -> dict:
    entry = catalog.provider(provider_id) if isinstance(provider_id, str) else None
    if entry is None:
        raise ValidationFailed({"provider": ["Unknown provider; see GET /api/integrations/catalog."]})
    return entry


def _store(integration: Integration, split: SplitConfig) -> None:
    integration.config = split.plain
    integration.secrets = json.dumps(split.secret, sort_keys=True)


def mcp_check(*, agent: Agent, entry: dict, split: SplitConfig) -> None:
    """An MCP server needs a provider that has one, an OpenClaw agent, and its fields."""
    if not entry.get("mcp"):
        raise ValidationFailed({"mcpEnabled": [f"{entry['name']} cannot run as an MCP server."]})
    if not family_of(agent.runtime_family).config_mcp_servers:
        raise McpUnsupported()
    missing = [key for key in entry["mcp"].get("requiredFields", ()) if not value_of(entry, split, key)]
    if missing:
        raise ValidationFailed({f"config.{key}": ["Needed for the MCP server."] for key in missing})


@transaction.atomic
def integration_connect(*, agent: Agent, provider: str, config, user=None, mcp_enabled: bool = False) -> Integration:
    """Validate and store a connection (secrets encrypted), status active, and announce it."""
    entry = provider_entry(provider)
    if entry["authType"] == "oauth2":
        raise OAuthRequired()
    split = config_validate(entry, config if config is not None else {})
    if mcp_enabled:
        mcp_check(agent=agent, entry=entry, split=split)
    integration = Integration(agent=agent, provider=entry["id"], status=IntegrationStatus.ACTIVE,
                              mcp_enabled=mcp_enabled, created_by=user)
    _store(integration, split)
    try:
        with transaction.atomic():
            integration.save()
    except IntegrityError:
        raise AlreadyConnected() from None
    integration_connected_event(integration, entry)
    return integration


def integration_connected_event(integration: Integration, entry: dict) -> None:
    # Names only: an event never carries a credential.
    agent_event(integration.agent, "integration.connected",
                f"{entry['name']} was connected to agent {integration.agent.name}.",
                integration_id=str(integration.pk), provider=entry["id"])


@transaction.atomic
def integration_update(*, integration: Integration, config=None, mcp_enabled: bool | None = None) -> Integration:
    """Change fields (`[REDACTED]` keeps a stored secret) and/or turn the MCP server on or off;
    the MCP change reaches the runtime at the agent's next redeploy."""
    integration = Integration.objects.select_for_update().get(pk=integration.pk)
    entry = provider_entry(integration.provider)
    split = stored_config(integration)
    if config is not None:
        split = config_validate(entry, config, stored=split)
        _store(integration, split)
    if mcp_enabled is not None:
        if mcp_enabled:
            mcp_check(agent=integration.agent, entry=entry, split=split)
        integration.mcp_enabled = mcp_enabled
    integration.save()
    return integration


@transaction.atomic
def integration_remove(*, integration: Integration) -> None:
    """Delete the record and its credentials. The agent is not restarted: a running runtime
    gets the variables taken out of its config (after commit, by a task)."""
    agent = integration.agent
    deleted, _ = Integration.objects.filter(pk=integration.pk).delete()
    if not deleted:
        raise NotFound("Integration not found.")
    if agent.status in SERVING:
        task_named(APPLY_TASK).delay_on_commit(str(agent.pk), False)
