"""Email: messages sent with Django's mail (EMAIL_URL, DEFAULT_FROM_EMAIL). Outbound only."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMessage

from fleet.sending import SendResult, send_mail_message

SUBJECT_WORDS = 8


def recipients(config: dict, target: str) -> list[str]:
    """Who a send addresses: the target (a reply's sender), else the channel's `to`."""
    return [target] if target else list(config.get("to") or [])


def send(config: dict, secrets: dict, text: str, target: str) -> SendResult:
    recipients_ = recipients(config, target)
    if not recipients_:
        return SendResult.failure("No recipients.")
    first_line = " ".join(text.split()[:SUBJECT_WORDS])
    subject = " ".join(f"{config.get('subjectPrefix') or ''} {first_line}".split())[:200]
    return send_mail_message(EmailMessage(subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL,
                                          to=recipients_))
