"""One transport per channel type. A send never raises: it returns a SendResult saying whether it
worked and, when it did not, whether trying again could help (healthchecks' transports, in spirit).
"""

from __future__ import annotations

import smtplib
from dataclasses import dataclass

import requests
from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.template.loader import render_to_string
from django.utils import timezone

from fleet.netsafety import UnsafeTarget, safe_session

from .signing import signature_headers

MAX_ERROR_LENGTH = 500
MAX_SUBJECT_MESSAGE = 120
USER_AGENT = "Fleet-Alerts/1.0"
RETRYABLE_CLIENT_ERRORS = frozenset({408, 429})


@dataclass(frozen=True)
class SendResult:
    succeeded: bool
    permanent: bool = False  # a failure no retry can fix
    status_code: int | None = None
    error: str = ""

    @classmethod
    def failure(cls, error: str, *, permanent: bool = False, status_code: int | None = None) -> SendResult:
        return cls(False, permanent, status_code, error[:MAX_ERROR_LENGTH])


def send_webhook(*, url: str, headers: dict, secret: str | None, message_id: str, body: bytes) -> SendResult:
    request_headers = {
        **headers,
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        **signature_headers(
            secret=secret, message_id=message_id, timestamp=int(timezone.now().timestamp()), body=body
        ),
    }
    try:
        with safe_session() as session:
            response = session.post(url, data=body, headers=request_headers, timeout=settings.OUTBOUND_TIMEOUT_SECONDS)
    except UnsafeTarget as exc:
        return SendResult.failure(f"Refused unsafe target: {exc}", permanent=True)
    except requests.RequestException as exc:
        return SendResult.failure(f"Request failed: {_describe(exc)}")
    return _classify(response)


def _classify(response) -> SendResult:
    code = response.status_code
    if 200 <= code < 300:
        return SendResult(True, status_code=code)
    error = f"HTTP {code} {response.reason or ''}".strip()
    permanent = 400 <= code < 500 and code not in RETRYABLE_CLIENT_ERRORS  # 410 Gone included
    return SendResult.failure(error, permanent=permanent, status_code=code)


def _describe(exc: Exception) -> str:
    kind = type(exc).__name__
    return f"{kind}: {exc}" if str(exc) else kind


def send_email(*, to: list[str], subject_prefix: str | None, payload: dict) -> SendResult:
    context = {"alert": payload}
    message = EmailMultiAlternatives(
        subject=email_subject(payload, subject_prefix),
        body=render_to_string("alerts/email/alert.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=list(to),
        # Sent inline by the emitter: never wait on a mail server for ever.
        connection=get_connection(
            timeout=getattr(settings, "EMAIL_TIMEOUT", None) or settings.OUTBOUND_TIMEOUT_SECONDS
        ),
    )
    message.attach_alternative(render_to_string("alerts/email/alert.html", context), "text/html")
    try:
        message.send(fail_silently=False)
    except smtplib.SMTPResponseException as exc:
        reply = exc.smtp_error.decode(errors="replace") if isinstance(exc.smtp_error, bytes) else str(exc.smtp_error)
        return SendResult.failure(f"SMTP {exc.smtp_code} {reply}", permanent=500 <= exc.smtp_code < 600)
    except smtplib.SMTPRecipientsRefused as exc:
        return SendResult.failure(f"SMTP recipients refused: {', '.join(exc.recipients)}", permanent=True)
    except (smtplib.SMTPException, OSError) as exc:
        return SendResult.failure(f"SMTP failed: {_describe(exc)}")
    return SendResult(True)


def email_subject(payload: dict, prefix: str | None) -> str:
    message = " ".join((payload.get("message") or "").split())
    if len(message) > MAX_SUBJECT_MESSAGE:
        message = message[: MAX_SUBJECT_MESSAGE - 1] + "…"
    subject = f"[{payload['workspace']['name']}] {payload['type']}"
    if message:
        subject += f": {message}"
    if payload.get("test"):
        subject += " (test)"
    subject = f"{prefix} {subject}" if prefix else subject
    return " ".join(subject.split())  # one line: a header may not carry a newline
