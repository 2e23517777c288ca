"""Reads of integrations; access to the agent is checked by the route (agents.permissions)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from agents.models import Agent
from fleet.errors import NotFound

from . import catalog
from .fields import env_of, redacted, stored_config
from .models import Integration

INTEGRATION_NOT_FOUND = "Integration not found."


def integrations_of_agent(*, agent: Agent) -> QuerySet[Integration]:
    return Integration.objects.filter(agent=agent).order_by("created_at", "id")


def integration_of_agent(*, agent: Agent, integration_id) -> Integration:
    integration = Integration.objects.filter(agent=agent, pk=integration_id).first()
    if integration is None:
        raise NotFound(INTEGRATION_NOT_FOUND)
    return integration


@dataclass(frozen=True)
class IntegrationRecord:
    """What a read shows of an integration: secrets as [REDACTED], variable names only."""

    id: object
    provider: str
    name: str
    category: str
    auth_type: str
    status: str
    config: dict
    env_vars: list[str]
    mcp_enabled: bool
    mcp_available: bool
    created_at: object
    last_tested_at: object
    last_test_result: dict | None
    token_expires_at: object
    last_error: str


def integration_record(integration: Integration) -> IntegrationRecord:
    entry = catalog.provider(integration.provider) or {
        "name": integration.provider, "category": "", "authType": "", "configFields": [], "mcp": None}
    split = stored_config(integration)
    return IntegrationRecord(
        id=integration.pk, provider=integration.provider, name=entry["name"], category=entry["category"],
        auth_type=entry["authType"], status=integration.status, config=redacted(entry, split),
        env_vars=sorted(env_of(entry, split)), mcp_enabled=integration.mcp_enabled,
        mcp_available=bool(entry.get("mcp")), created_at=integration.created_at,
        last_tested_at=integration.last_tested_at, last_test_result=integration.last_test_result,
        token_expires_at=integration.token_expires_at, last_error=integration.last_error,
    )
