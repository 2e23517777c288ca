"""The CLI login table: the only commands the login routes can run, and how their output reads."""

from __future__ import annotations

import pytest

from channels.definitions import OPENCLAW_TYPES
from channels.errors import LoginNotAvailable
from channels.services.cli_login import CLI_LOGINS, UNSUPPORTED, cli_login_of, failure_message

CLI_TYPES = [d for d in OPENCLAW_TYPES if d.login == "cli"]


def test_every_cli_type_has_a_fixed_command_or_a_stated_refusal():
    assert {d.type for d in CLI_TYPES} == {"feishu", "zalouser"}
    for definition in CLI_TYPES:
        assert (definition.type in CLI_LOGINS) != (definition.type in UNSUPPORTED)
    assert CLI_LOGINS["zalouser"].argv == ("openclaw", "channels", "login", "--channel", "zalouser")
    assert all(isinstance(login.argv, tuple) for login in CLI_LOGINS.values())  # never edited per request


def test_a_type_without_a_row_is_409_unsupported():
    feishu = next(d for d in CLI_TYPES if d.type == "feishu")
    with pytest.raises(LoginNotAvailable) as caught:
        cli_login_of(feishu)
    assert caught.value.code == "unsupported" and "interactive" in caught.value.message
    whatsapp = next(d for d in OPENCLAW_TYPES if d.type == "whatsapp")
    with pytest.raises(LoginNotAvailable):
        cli_login_of(whatsapp)


@pytest.mark.parametrize(("line", "path"), [
    ("Scan QR image: /tmp/openclaw/openclaw-zalouser-qr-default.png", "/tmp/openclaw/openclaw-zalouser-qr-default.png"),
    ("Scan QR image: /tmp/openclaw-zalouser-qr-work-1.png\r", "/tmp/openclaw-zalouser-qr-work-1.png"),
    ("Scan QR image: /tmp/../etc/openclaw-zalouser-qr-default.png", None),
    ("Scan QR image: /etc/passwd", None),
    ("Scan QR image: /tmp/openclaw/secret.png", None),
    ("Scan QR image: /tmp/openclaw-zalouser-qr-x.png; cat /etc/passwd", None),
])
def test_only_the_logins_own_qr_file_is_read(line, path):
    found = CLI_LOGINS["zalouser"].qr_line.search(line.replace("\r", ""))
    assert (found.group(1) if found else None) == path


def test_the_failure_line_is_the_message():
    output = ("Installed Gateway service state and config paths could not be verified.\n"
              "Generating QR login for Zalo Personal (account: default, profile: default)...\n"
              "Channel login failed: Failed to start QR login: fetch failed | getaddrinfo ENOTFOUND id.zalo.me\n")
    assert failure_message(output, fallback="x") == (
        "Channel login failed: Failed to start QR login: fetch failed | getaddrinfo ENOTFOUND id.zalo.me")
    assert failure_message("only line\n", fallback="x") == "only line"
    assert failure_message("", fallback="fallback") == "fallback"
