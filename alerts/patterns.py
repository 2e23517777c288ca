"""Event patterns of alert rules: a literal kind ("agent.error"), a suffix glob ("agent.*") or "*"."""

from __future__ import annotations

import re

MAX_PATTERN_LENGTH = 100
MATCH_ALL = "*"

# A kind is dot-separated words of letters, digits, "_" and "-": agent.budget_exceeded.
_KIND = r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*"
_LITERAL = re.compile(rf"^{_KIND}$")
_SUFFIX_GLOB = re.compile(rf"^{_KIND}\.\*$")


def pattern_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid event pattern, or None when it is."""
    if not pattern:
        return "This field may not be blank."
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"Ensure this field has no more than {MAX_PATTERN_LENGTH} characters."
    if pattern == MATCH_ALL or _LITERAL.match(pattern) or _SUFFIX_GLOB.match(pattern):
        return None
    return "Use an event kind such as 'agent.error', a suffix glob such as 'agent.*', or '*'."


def pattern_matches(pattern: str, kind: str) -> bool:
    """Whether an event of `kind` matches `pattern`; "agent.*" matches "agent.x.y" but not "agent"."""
    if pattern == MATCH_ALL:
        return True
    if pattern.endswith(".*"):
        return kind.startswith(pattern[:-1])
    return kind == pattern


def matching_patterns(kind: str) -> list[str]:
    """Every pattern that matches `kind` (`pattern_matches` inverted), so the database can look
    rules up by equality: "agent.budget.x" gives "*", itself, "agent.*" and "agent.budget.*"."""
    parts = kind.split(".")
    return [MATCH_ALL, kind, *(".".join(parts[:n]) + ".*" for n in range(1, len(parts)))]


def synthetic_test_kind(pattern: str) -> str:
    """The kind of a rule's synthetic test event: "<pattern prefix>.test", or "test" for "*"."""
    if pattern == MATCH_ALL:
        return "test"
    prefix = pattern[:-2] if pattern.endswith(".*") else pattern.rpartition(".")[0] or pattern
    return f"{prefix}.test"
