"""CLI logins (Zalo Personal): OpenClaw's own `openclaw channels login --channel <type>` run inside
the agent's workload through the backend's exec, from a fixed table. Nothing a request sends
reaches the argv: the route names a channel type, and only a type with a row here runs anything.

The Zalo login prints `Scan QR image: <path>` (a PNG it wrote under the workload's /tmp) and then
waits for the scan; Fleet stops reading there, leaves the command waiting in the workload, and
reads the PNG with a second fixed argv (`cat <path>`, the path checked against the row's pattern)
into the QR data URL. A login that fails (offline: `getaddrinfo ENOTFOUND id.zalo.me`) exits
non-zero; its "Channel login failed: ..." line is the 502 gateway_error message.

Feishu/Lark has no row: its `channels login` is an interactive terminal wizard (a select prompt
that cancels itself without a terminal: "Channel login failed: wizard cancelled"), so Fleet
answers 409 unsupported and the channel is set up with its App ID and secret instead.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from agents.backends.engine import workload_exec
from agents.gateway import GatewayError
from agents.models import Agent

from ..definitions import Definition
from ..errors import LoginNotAvailable
from .login_result import QR_LIFETIME, LoginResult

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FAILURE = re.compile(r"(?:login failed|error)[:!]", re.IGNORECASE)
QR_IMAGE_BYTES = 512 * 1024
OUTPUT_BYTES = 64 * 1024


@dataclass(frozen=True)
class CliLogin:
    argv: tuple[str, ...]
    qr_line: re.Pattern  # group 1: the path of the QR image the command wrote
    scan_hint: str


CLI_LOGINS: dict[str, CliLogin] = {
    "zalouser": CliLogin(
        argv=("openclaw", "channels", "login", "--channel", "zalouser"),
        # Only a file the login itself names: under /tmp, no "..", the plugin's own file name.
        qr_line=re.compile(r"Scan QR image: (/tmp/(?:[\w-][\w.-]*/)*openclaw-zalouser-qr-[\w-]+\.png)\s*$",
                           re.MULTILINE),
        scan_hint="Scan the QR code with the Zalo app.",
    ),
}

UNSUPPORTED = {
    "feishu": "OpenClaw's Feishu/Lark login is an interactive terminal wizard that cannot run unattended; "
              "save the channel with its App ID and App secret instead.",
}


def cli_login_of(definition: Definition) -> CliLogin:
    login = CLI_LOGINS.get(definition.type)
    if login is None:
        raise LoginNotAvailable(UNSUPPORTED.get(definition.type)
                                or f"The {definition.label} channel has no CLI login Fleet can run.")
    return login


def _text(output: bytes) -> str:
    return ANSI.sub("", output.decode("utf-8", errors="replace")).replace("\r", "")


def failure_message(text: str, *, fallback: str) -> str:
    """The line the CLI says why it failed in, else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    failed = [line for line in lines if FAILURE.search(line)]
    return (failed or lines or [fallback])[-1][:500]


def run_cli_login(agent: Agent, definition: Definition):
    """Run the type's login command: a LoginResult with the QR, or "linked" when the command
    finished without needing one. GatewayError with the CLI's own message when it fails."""
    login = cli_login_of(definition)
    result = workload_exec(agent, login.argv, timeout=settings.CHANNELS_CLI_LOGIN_TIMEOUT_SECONDS,
                           max_output=OUTPUT_BYTES, stop_when=lambda out: bool(login.qr_line.search(_text(out))))
    text = _text(result.output)
    qr = login.qr_line.search(text)
    if qr:
        image = workload_exec(agent, ("cat", qr.group(1)), timeout=10, max_output=QR_IMAGE_BYTES)
        if image.exit_code != 0 or image.truncated or not image.output.startswith(b"\x89PNG"):
            raise GatewayError(f"The {definition.label} login wrote a QR image Fleet could not read.")
        data_url = "data:image/png;base64," + base64.b64encode(image.output).decode()
        return LoginResult("qr", login.scan_hint, data_url, timezone.now() + QR_LIFETIME)
    if result.exit_code == 0:
        return LoginResult("linked", failure_message(text, fallback="Linked."), connected=True)
    if result.exit_code is None:
        raise GatewayError(f"The {definition.label} login gave no QR code within "
                           f"{settings.CHANNELS_CLI_LOGIN_TIMEOUT_SECONDS:g} s.")
    raise GatewayError(failure_message(text, fallback=f"The {definition.label} login failed "
                                                       f"(exit code {result.exit_code})."))
