"""The one rule for secrets read back and written back, for every app that stores them:
a stored secret reads as `[REDACTED]` (empty when none is stored), and `[REDACTED]` written back
keeps the stored secret, an error when there is none to keep."""

from __future__ import annotations

REDACTED = "[REDACTED]"
NOTHING_TO_KEEP = "No stored value to keep: send the secret itself."


def shown(secret) -> str:
    """What a read shows of a secret: the marker when one is stored, else ""."""
    return REDACTED if secret not in (None, "") else ""


def keeps_stored(value) -> bool:
    """Whether a written value means "keep the stored secret"."""
    return value == REDACTED
