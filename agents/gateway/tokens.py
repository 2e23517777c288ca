"""Agent secrets: gateway tokens, usage ingest tokens, and the strength rule for adopted tokens."""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
from collections import Counter

from django.conf import settings

MIN_ADOPTED_TOKEN_LENGTH = 32
# A random token of 32+ characters from any common alphabet (hex: 4 bits) clears these easily.
MIN_SHANNON_BITS_PER_CHAR = 2.5
MIN_DISTINCT_CHARACTERS = 7
MAX_REPEATED_PERIOD = 8


def gateway_token_generate() -> str:
    return secrets.token_urlsafe(32)


def usage_token_for(agent) -> str:
    """The agent's usage ingest token, derived from its random gateway token and SECRET_KEY.

    Derived rather than drawn so that a provisioning job that runs twice (a retry, a worker
    killed after creating the workload) injects the same token the stored digest matches.
    Only its digest is stored; the token itself goes into the workload's environment.
    """
    message = f"fleet-usage-token:{agent.pk}:{agent.gateway_token}".encode()
    mac = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).digest()
    return "fut_" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def usage_token_digest(raw_token: str) -> str:
    """What is stored for an agent's usage ingest token (the raw token lives only in the workload)."""
    return hmac.new(settings.SECRET_KEY.encode(), raw_token.encode(), hashlib.sha256).hexdigest()


def usage_token_matches(agent, raw_token: str) -> bool:
    """Constant-time check of a token presented by a runtime (header X-Agent-Token)."""
    if not agent.usage_token_digest or not raw_token:
        return False
    return hmac.compare_digest(agent.usage_token_digest, usage_token_digest(raw_token))


def _shannon_bits_per_char(text: str) -> float:
    counts = Counter(text)
    return -sum((n / len(text)) * math.log2(n / len(text)) for n in counts.values())


def _is_short_repetition(text: str) -> bool:
    """True when the text is a pattern of at most MAX_REPEATED_PERIOD characters repeated."""
    for period in range(1, min(MAX_REPEATED_PERIOD, len(text) // 2) + 1):
        if all(text[i] == text[i % period] for i in range(len(text))):
            return True
    return False


def _is_mostly_sequential(text: str) -> bool:
    """True for runs like "abcdefgh..." or "0123456789...": neighbours one code point apart."""
    steps = sum(1 for a, b in zip(text, text[1:], strict=False) if abs(ord(a) - ord(b)) == 1)
    return steps >= (len(text) - 1) / 2


def weak_token_reason(token) -> str | None:
    """Why a gateway token cannot be accepted, or None when it looks like a random secret."""
    if not isinstance(token, str) or not token:
        return "The gateway token is required."
    if len(token) < MIN_ADOPTED_TOKEN_LENGTH:
        return f"The gateway token must be at least {MIN_ADOPTED_TOKEN_LENGTH} characters."
    if any(ch.isspace() for ch in token):
        return "The gateway token must not contain whitespace."
    if _is_short_repetition(token):
        return "The gateway token is a repeated pattern; use a token from a secure random source."
    if len(set(token)) < MIN_DISTINCT_CHARACTERS or _shannon_bits_per_char(token) < MIN_SHANNON_BITS_PER_CHAR:
        return "The gateway token has too little variety; use a token from a secure random source."
    if _is_mostly_sequential(token):
        return "The gateway token is a sequence; use a token from a secure random source."
    return None
