"""Gateway token strength and the usage ingest token."""

from __future__ import annotations

import secrets

import pytest

from agents.gateway.tokens import usage_token_digest, usage_token_for, usage_token_matches, weak_token_reason
from tests.factories.agents import AgentFactory


@pytest.mark.parametrize("token", [secrets.token_hex(16) for _ in range(50)] + [secrets.token_urlsafe(32)],
                         ids=[f"hex-{i}" for i in range(50)] + ["urlsafe"])  # the same in every xdist worker
def test_random_tokens_are_strong(token):
    assert weak_token_reason(token) is None


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (None, "required"),
        ("short", "at least 32"),
        ("a" * 31 + "\t" + "b" * 8, "whitespace"),
        ("z" * 64, "repeated"),
        ("0123abcd" * 6, "repeated"),
        ("aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbcccc", "variety"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij", "sequence"),
    ],
)
def test_obviously_non_random_tokens_are_weak(token, words):
    assert words in weak_token_reason(token)


@pytest.mark.django_db
def test_the_usage_token_is_stable_per_agent_and_checked_against_its_digest():
    agent = AgentFactory(gateway_token=secrets.token_urlsafe(32))
    token = usage_token_for(agent)
    agent.usage_token_digest = usage_token_digest(token)

    assert usage_token_for(agent) == token  # a retried job injects the same token
    assert usage_token_matches(agent, token)
    assert not usage_token_matches(agent, token + "x")
    assert usage_token_for(AgentFactory(gateway_token=secrets.token_urlsafe(32))) != token
