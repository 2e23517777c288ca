"""What a channel login answers, whichever way it ran (the runtime's own login method or the
type's CLI login command)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

QR_LIFETIME = timedelta(seconds=60)  # WhatsApp rotates its QR about once a minute


@dataclass(frozen=True)
class LoginResult:
    status: str  # "qr", "linked", "connected" or "waiting"
    message: str
    qr_data_url: str | None = None
    expires_at: datetime | None = None
    connected: bool = False
