"""Fleet's blocks in a runtime's env file (Hermes's `$HERMES_HOME/.env`, which it re-reads with
override at every turn): each owner (`integrations`, `model`) writes its variables between its
own markers and touches nothing else of the file.

    # >>> fleet model (managed by Fleet; edits here are replaced) >>>
    FLEET_MODEL_API_KEY='...'
    # <<< fleet model <<<

A block is rewritten where it stands (appended when absent), so two owners' writes do not move
each other. Writes to one agent's file are serialised (a lock per agent in PostgreSQL), so two
owners writing at once cannot lose each other's block.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction

from fleet.values import env_value_allowed

from ..backends.engine import engine_call
from ..models import Agent

logger = logging.getLogger(__name__)

_DOTENV_LINE_BREAK = re.compile(r"\r\n|\n|\r")
# The advisory-lock space of agents' configuration files (a fixed 32-bit class; the agent the other half).
STATE_FILES_LOCK_CLASS = 0x466C_0E7F


def block_markers(owner: str) -> tuple[str, str]:
    return (f"# >>> fleet {owner} (managed by Fleet; edits here are replaced) >>>", f"# <<< fleet {owner} <<<")


def split_env_file(text: str, owner: str) -> tuple[list[str], list[str], dict[str, str]]:
    """(the lines before `owner`'s block, the lines after it, the variables inside it), lines
    split where python-dotenv splits them (Hermes's reader): CR LF, LF or CR, nothing else."""
    begin, end = block_markers(owner)
    before, after, block, where = [], [], {}, "before"
    for line in _DOTENV_LINE_BREAK.split(text.removesuffix("\n")) if text else []:
        if line == begin and where == "before":
            where = "inside"
        elif line == end and where == "inside":
            where = "after"
        elif where == "inside":
            name, _, value = line.partition("=")
            if name:
                block[name] = unquote(value)
        else:
            (before if where == "before" else after).append(line)
    return before, after, block


def env_file_render(text: str, owner: str, env: dict[str, str]) -> tuple[str, list[str], list[str]]:
    """(the file with `owner`'s block holding `env`, the names added or changed, those removed).
    A value that could end its line (stored before values were checked) is left out, by name
    in the log: one bad value must not write a line of its own."""
    refused = sorted(name for name, value in env.items() if not env_value_allowed(value))
    if refused:
        logger.warning("Left out of the env file (control characters or line breaks): %s", ", ".join(refused))
        env = {name: value for name, value in env.items() if name not in refused}
    before, after, block = split_env_file(text, owner)
    previous = {k: v for k, v in block.items() if v != ""}
    # A removed variable is written empty: Hermes loads the file with override, so the value
    # it holds from an earlier turn is cleared without a restart.
    removed = sorted(set(previous) - set(env))
    begin, end = block_markers(owner)
    lines = [begin] + [f"{name}={quote(value)}" for name, value in sorted(env.items())]
    lines += [f"{name}=" for name in removed] + [end]
    while before and not before[-1].strip() and not after:
        before.pop()  # no blank lines piling up before a block appended at the end
    content = "\n".join([*before, *lines, *after]) + "\n"
    changed = sorted(name for name, value in env.items() if previous.get(name) != value)
    return content, changed, removed


def env_block_write(agent: Agent, env_file: str, owner: str, env: dict[str, str]) -> tuple[list[str], list[str]]:
    """Put `env` into `owner`'s block of the agent's env file (written only when it changes):
    (the names added or changed, those removed). Engine failures raise engine_call's errors."""
    with state_files_lock(agent):
        raw = engine_call(agent, lambda backend: backend.read_state_file(agent, env_file)) or b""
        text = raw.decode("utf-8", errors="replace")
        content, changed, removed = env_file_render(text, owner, env)
        if content != text:
            engine_call(agent, lambda backend: backend.write_state_file(agent, env_file, content.encode()))
    return changed, removed


@contextmanager
def state_files_lock(agent: Agent) -> Iterator[None]:
    """The only writer of the agent's runtime configuration files (its env file, Hermes's
    config.yaml) while the block runs: a transaction-level lock per agent in PostgreSQL (SQLite
    runs one writing transaction at a time anyway)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                               [STATE_FILES_LOCK_CLASS, zlib.crc32(agent.pk.bytes) - 2**31])
        yield


def quote(value: str) -> str:
    """python-dotenv's syntax: single quotes are literal (no escapes, no ${} expansion); a value
    holding a single quote is double-quoted, with backslash and double quote escaped (there a
    `${NAME}` would be expanded: python-dotenv has no escape for it). Values hold no line break
    (fleet.values.env_value_allowed)."""
    if "'" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        body, out, i = value[1:-1], [], 0
        while i < len(body):
            if body[i] == "\\" and i + 1 < len(body):
                nxt = body[i + 1]
                out.append("\n" if nxt == "n" else nxt)
                i += 2
            else:
                out.append(body[i])
                i += 1
        return "".join(out)
    return value
