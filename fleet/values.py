"""Rules about values Fleet hands on to runtimes (one rule, shared by every app that stores them)."""

from __future__ import annotations

import re

# What no value may hold: control characters (tab aside) and Unicode's line and paragraph
# separators. Values become environment variables or config entries, one line each in Hermes's
# `.env`, and readers disagree on what ends a line (python-dotenv: CR and LF; str.splitlines:
# eight more).
_NOT_IN_ENV = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def env_value_allowed(value: str) -> bool:
    return not _NOT_IN_ENV.search(value)
