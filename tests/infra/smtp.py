"""A real SMTP server (aiosmtpd) on 127.0.0.1, with Django's SMTP backend pointed at it.

    def test_it_emails(smtp_server):
        ... code that sends mail ...
        (message,) = smtp_server.wait_for(1)
        assert message.rcpt_tos == ["ops@example.com"]
        assert message.email["Subject"] == "Agent down"

`smtp_server.fail_next("451 4.3.0 Try again later")` answers the next message with an error
(4xx transient, 5xx permanent) to exercise retries.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage

import pytest
from aiosmtpd.controller import Controller

from tests.support import free_loopback_port

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ReceivedMail:
    mail_from: str
    rcpt_tos: list[str]
    email: EmailMessage

    @property
    def subject(self) -> str:
        return self.email["Subject"] or ""

    @property
    def text(self) -> str:
        """The plain-text body (the text/plain part of a multipart message)."""
        part = self.email.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""


class _Collector:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_DATA(self, server, session, envelope) -> str:
        return self.server._receive(envelope)


class SmtpServer:
    def __init__(self) -> None:
        self.port = free_loopback_port()
        self._messages: list[ReceivedMail] = []
        self._failures: deque[str] = deque()
        self._arrived = threading.Condition()
        self._controller: Controller | None = None

    def start(self) -> SmtpServer:
        if self._controller is None:
            self._controller = Controller(_Collector(self), hostname=HOST, port=self.port)
            self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def fail_next(self, reply: str = "451 4.3.0 Try again later", *, times: int = 1) -> None:
        with self._arrived:
            self._failures.extend([reply] * times)

    @property
    def messages(self) -> list[ReceivedMail]:
        with self._arrived:
            return list(self._messages)

    def wait_for(self, n: int = 1, timeout: float = 10.0) -> list[ReceivedMail]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._messages) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"expected {n} message(s) within {timeout}s, got {len(self._messages)}"
                    )
                self._arrived.wait(left)
            return list(self._messages)

    def _receive(self, envelope) -> str:
        with self._arrived:
            if self._failures:
                return self._failures.popleft()
            self._messages.append(
                ReceivedMail(
                    mail_from=envelope.mail_from,
                    rcpt_tos=list(envelope.rcpt_tos),
                    email=message_from_bytes(envelope.original_content, policy=policy.default),
                )
            )
            self._arrived.notify_all()
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_server(settings):
    server = SmtpServer().start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = HOST
    settings.EMAIL_PORT = server.port
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 10
    yield server
    server.stop()
