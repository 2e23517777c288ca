"""Errors of destinations as rows, events and logs may show them: a library's message may quote
anything it was given, credentials included."""

from __future__ import annotations

import re

from fleet.redaction import REDACTED

ERROR_MAX = 500
# user:password@ in any URL a library's message may quote.
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


def scrubbed(text: str, secrets) -> str:
    """An error for the row, events and logs: the destination's credentials and any URL's
    user:password replaced, one line, at most ERROR_MAX characters."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)
    text = " ".join(text.split())
    return text if len(text) <= ERROR_MAX else text[: ERROR_MAX - 1] + "…"
