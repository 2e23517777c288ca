"""What sending something out answers, for every app that sends (alerts' transports, the
channels' adapters): a send never raises; it answers a SendResult saying whether it worked, and
when it did not, why (no secret in it) and whether trying again could help. Email goes through
one door with one timeout."""

from __future__ import annotations

import smtplib
from dataclasses import dataclass, field

from django.conf import settings
from django.core.mail import get_connection

from .redaction import REDACTED

MAX_ERROR = 500


@dataclass(frozen=True)
class SendResult:
    succeeded: bool
    error: str = ""
    permanent: bool = False  # a failure no retry can fix
    status_code: int | None = None
    detail: dict = field(default_factory=dict)  # the provider's ids of what was sent (a message id...)

    @classmethod
    def failure(cls, error: str, *, permanent: bool = False, status_code: int | None = None,
                secrets=()) -> SendResult:
        """A failure whose message holds none of `secrets` (a bot token that sits in a URL)."""
        for secret in secrets:
            if secret:
                error = error.replace(str(secret), REDACTED)
        return cls(False, error[:MAX_ERROR], permanent, status_code)


def mail_connection():
    """Mail is sent inline by whoever sends it: never wait on a mail server for ever."""
    return get_connection(timeout=getattr(settings, "EMAIL_TIMEOUT", None) or settings.OUTBOUND_TIMEOUT_SECONDS)


def send_mail_message(message) -> SendResult:
    """Send a Django EmailMessage on `mail_connection()`: a 5xx reply or refused recipients are
    permanent, anything else may pass on a retry."""
    message.connection = mail_connection()
    try:
        message.send(fail_silently=False)
    except smtplib.SMTPResponseException as exc:
        reply = exc.smtp_error.decode(errors="replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        return SendResult.failure(f"SMTP {exc.smtp_code} {reply}", permanent=500 <= exc.smtp_code < 600)
    except smtplib.SMTPRecipientsRefused as exc:
        return SendResult.failure(f"SMTP recipients refused: {', '.join(exc.recipients)}", permanent=True)
    except (smtplib.SMTPException, OSError) as exc:
        return SendResult.failure(f"SMTP failed: {describe(exc)}")
    return SendResult(True)


def describe(exc: Exception) -> str:
    """An exception as a short reason: its type, and its message when it has one."""
    kind = type(exc).__name__
    return f"{kind}: {exc}" if str(exc) else kind
