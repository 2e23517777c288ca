"""Helpers of the integration tests."""

from __future__ import annotations

GITHUB_TOKEN = "ghp_s3cr3t-github-token-value-0001"
STRIPE_KEY = "sk_test_s3cr3t-stripe-key-0002"


def url(agent, suffix: str = "") -> str:
    return f"/api/agents/{agent.id}/integrations{suffix}"


def connect(client, agent, provider="github", config=None, **extra):
    body = {"provider": provider, "config": config if config is not None else {"token": GITHUB_TOKEN}, **extra}
    return client.post(url(agent), body, format="json")
