"""What the terminal's tests share: a terminal's WebSocket path, callers' headers, and reading a
shell's output from a test socket until a pattern shows."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlsplit

from django.utils import timezone

from accounts.tokens import session_token_issue
from fleet.models import StreamLease


def terminal_path(agent) -> str:
    return f"/api/agents/{agent.pk}/terminal"


def bearer(user) -> dict[str, str]:
    return {"authorization": f"Bearer {session_token_issue(user=user)}"}


def path_of(url: str) -> str:
    """The path and query of a ws(s) URL (what the test socket opens)."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def hold_terminals(user, count: int) -> None:
    """`count` live terminal leases of `user`, as if held by another web process."""
    now = timezone.now()
    for _ in range(count):
        StreamLease.objects.create(user=user, kind="terminal", holder="elsewhere:1:1", opened_at=now,
                                   expires_at=now + timedelta(seconds=60))


def output_until(socket, pattern: bytes, *, timeout: float = 20) -> re.Match:
    """Read the socket's binary frames until the output matches the regex `pattern`."""
    seen = b""
    while (found := re.search(pattern, seen)) is None:
        frame = socket.receive(timeout)
        assert isinstance(frame, bytes), f"a text frame from the terminal: {frame!r}"
        seen += frame
    return found
