"""What every legacy adapter offers: send a text, check an inbound request's signature, parse it.

A send never raises: it answers a fleet.sending.SendResult, as alerts' transports do. Errors
carry no secret: a bot token that sits in a URL is scrubbed from every message.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

import requests
from django.conf import settings

from fleet.errors import Unauthenticated
from fleet.sending import SendResult, describe  # noqa: F401 - the adapters' result, re-exported

USER_AGENT = "Fleet-Channels/1.0"


class SignatureRefused(Unauthenticated):
    code = "invalid_signature"
    default_message = "The request's signature does not match the channel's secret."


@dataclass(frozen=True)
class Inbound:
    """One message a provider delivered: its text, who sent it (where to answer), its id."""

    text: str
    sender: str
    update_id: str = ""
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ChallengeAnswer:
    """A provider request that is not a message and wants this exact answer (Slack's url_verification)."""

    body: dict


@dataclass(frozen=True)
class Ignored:
    """A request the channel accepts but that carries nothing for the agent (a bot's own echo)."""

    reason: str


def header(headers, name: str) -> str:
    return headers.get(name) or headers.get(name.lower()) or ""


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def api_session() -> requests.Session:
    """A session for the provider APIs named by settings (trusted, so not the SSRF guard):
    never through environment proxies, always with a timeout from the caller."""
    session = requests.Session()
    session.trust_env = False
    session.headers["User-Agent"] = USER_AGENT
    return session


def timeout() -> float:
    return settings.OUTBOUND_TIMEOUT_SECONDS


