"""One transport per channel type. A send never raises: it returns a fleet.sending.SendResult
saying whether it worked and, when it did not, whether trying again could help.
"""

from __future__ import annotations

import requests
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import timezone

from fleet.netsafety import UnsafeTarget, safe_session
from fleet.sending import SendResult, describe, send_mail_message

from .signing import signature_headers

MAX_SUBJECT_MESSAGE = 120
USER_AGENT = "Fleet-Alerts/1.0"
RETRYABLE_CLIENT_ERRORS = frozenset({408, 429})


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
        return SendResult.failure(f"Request failed: {describe(exc)}")
    return _classify(response)


def _classify(response) -> SendResult:
    code = response.status_code
    if 200 <= code < 300:
        return SendResult(True, status_code=code)
    error = f"HTTP {code} {response.reason or ''}".strip()
    permanent = 400 <= code < 500 and code not in RETRYABLE_CLIENT_ERRORS  # 410 Gone included
    return SendResult.failure(error, permanent=permanent, status_code=code)


def send_email(*, to: list[str], subject_prefix: str | None, payload: dict) -> SendResult:
    context = {"alert": payload}
    message = EmailMultiAlternatives(
        subject=email_subject(payload, subject_prefix),
        body=render_to_string("alerts/email/alert.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=list(to),
    )
    message.attach_alternative(render_to_string("alerts/email/alert.html", context), "text/html")
    return send_mail_message(message)


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
