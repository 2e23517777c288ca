"""The nemoclaw policy document (docs/api.md "Sandbox"): its validation, its default, and what it
becomes on an OpenClaw runtime. Pure functions; nothing here touches the database or a runtime.

    {exec: {mode: deny|allowlist|ask|full, allow: [{pattern, argPattern?}]},
     tools: {profile, allow: [], deny: []},
     network: {allow: [host[:port]], deny: [...]},
     model}
"""

from __future__ import annotations

import re

from fleet.errors import ValidationFailed

EXEC_MODES = ("deny", "allowlist", "ask", "full")
TOOL_PROFILES = ("minimal", "coding", "messaging", "full")
MODELS = (
    "nvidia/nemotron-3-super-120b-a12b",
    "nvidia/llama-3.1-nemotron-ultra-253b-v1",
    "nvidia/llama-3.3-nemotron-super-49b-v1.5",
    "nvidia/nemotron-3-nano-30b-a3b",
)
DEFAULT_MODEL = MODELS[0]
MAX_RULES = 100
MAX_PATTERN = 300
_TOOL_ID = re.compile(r"^[A-Za-z0-9_.*:-]{1,100}$")  # "exec", "group:fs", "browser.*"
_HOST = re.compile(r"^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252})?(:[0-9]{1,5})?$")
_SECTIONS = {"exec", "tools", "network", "model"}

# OpenClaw's own mapping of an exec mode to its approvals policy (exec-approvals-core in 2026.9.6).
_EXEC_POLICY = {
    "deny": {"security": "deny", "ask": "off"},
    "allowlist": {"security": "allowlist", "ask": "off"},
    "ask": {"security": "allowlist", "ask": "on-miss"},
    "full": {"security": "full", "ask": "off"},
}
WILDCARD_AGENT = "*"  # the approvals file's entry that applies to every agent of the runtime


def default_policy() -> dict:
    """What a new nemoclaw sandbox starts with: commands wait for an operator."""
    return {
        "exec": {"mode": "ask", "allow": []},
        "tools": {"profile": "coding", "allow": [], "deny": []},
        "network": {"allow": [], "deny": []},
        "model": DEFAULT_MODEL,
    }


def policy_validate(body, *, current: dict | None = None) -> dict:
    """The complete document from a POSTed one (sections left out keep `current`'s, or the
    default's); ValidationFailed naming each bad field."""
    errors: dict[str, str] = {}
    if not isinstance(body, dict):
        raise ValidationFailed({"non_field_errors": "The policy must be a JSON object."})
    base = current or default_policy()
    for key in body:
        if key not in _SECTIONS:
            errors[key] = f"Unknown section; use {', '.join(sorted(_SECTIONS))}."
    document = {
        "exec": _exec(body.get("exec", base["exec"]), errors),
        "tools": _tools(body.get("tools", base["tools"]), errors),
        "network": _network(body.get("network", base["network"]), errors),
        "model": _model(body.get("model", base.get("model", DEFAULT_MODEL)), errors),
    }
    if errors:
        raise ValidationFailed(errors)
    return document


def _object(value, name: str, errors: dict) -> dict | None:
    if not isinstance(value, dict):
        errors[name] = "Must be an object."
        return None
    return value


def _unknown(value: dict, name: str, allowed: set[str], errors: dict) -> None:
    for key in value:
        if key not in allowed:
            errors[f"{name}.{key}"] = "Unknown field."


def _list(value, name: str, errors: dict) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        errors[name] = "Must be a list."
        return []
    if len(value) > MAX_RULES:
        errors[name] = f"At most {MAX_RULES} entries."
        return []
    return value


def _exec(value, errors: dict) -> dict:
    value = _object(value, "exec", errors)
    if value is None:
        return {}
    _unknown(value, "exec", {"mode", "allow"}, errors)
    mode = value.get("mode", "ask")
    if mode not in EXEC_MODES:
        errors["exec.mode"] = f"Must be one of {', '.join(EXEC_MODES)}."
    rules = []
    for index, rule in enumerate(_list(value.get("allow"), "exec.allow", errors)):
        where = f"exec.allow[{index}]"
        if not isinstance(rule, dict):
            errors[where] = "Must be an object with pattern and optional argPattern."
            continue
        _unknown(rule, where, {"pattern", "argPattern"}, errors)
        pattern = rule.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > MAX_PATTERN:
            errors[f"{where}.pattern"] = f"A non-empty string of at most {MAX_PATTERN} characters."
            continue
        cleaned = {"pattern": pattern.strip()}
        arg_pattern = rule.get("argPattern")
        if arg_pattern is not None:
            if not isinstance(arg_pattern, str) or not arg_pattern or len(arg_pattern) > MAX_PATTERN:
                errors[f"{where}.argPattern"] = f"A non-empty regular expression of at most {MAX_PATTERN} characters."
                continue
            try:
                re.compile(arg_pattern)
            except re.error as exc:
                errors[f"{where}.argPattern"] = f"Not a regular expression: {exc}."
                continue
            cleaned["argPattern"] = arg_pattern
        rules.append(cleaned)
    return {"mode": mode, "allow": rules}


def _tool_ids(value, name: str, errors: dict) -> list[str]:
    ids = []
    for index, item in enumerate(_list(value, name, errors)):
        if not isinstance(item, str) or not _TOOL_ID.match(item):
            errors[f"{name}[{index}]"] = "A tool id or group such as exec or group:fs."
            continue
        if item not in ids:
            ids.append(item)
    return ids


def _tools(value, errors: dict) -> dict:
    value = _object(value, "tools", errors)
    if value is None:
        return {}
    _unknown(value, "tools", {"profile", "allow", "deny"}, errors)
    profile = value.get("profile", "coding")
    if profile not in TOOL_PROFILES:
        errors["tools.profile"] = f"Must be one of {', '.join(TOOL_PROFILES)}."
    return {"profile": profile, "allow": _tool_ids(value.get("allow"), "tools.allow", errors),
            "deny": _tool_ids(value.get("deny"), "tools.deny", errors)}


def _hosts(value, name: str, errors: dict) -> list[str]:
    hosts = []
    for index, item in enumerate(_list(value, name, errors)):
        valid = isinstance(item, str) and _HOST.match(item) is not None
        if not valid or (":" in item and not 0 < int(item.rsplit(":", 1)[1]) < 65536):
            errors[f"{name}[{index}]"] = "A host name or address, optionally with :port."
            continue
        if item.lower() not in hosts:
            hosts.append(item.lower())
    return hosts


def _network(value, errors: dict) -> dict:
    value = _object(value, "network", errors)
    if value is None:
        return {}
    _unknown(value, "network", {"allow", "deny"}, errors)
    return {"allow": _hosts(value.get("allow"), "network.allow", errors),
            "deny": _hosts(value.get("deny"), "network.deny", errors)}


def _model(value, errors: dict) -> str:
    if value not in MODELS:
        errors["model"] = f"Must be one of {', '.join(MODELS)}."
    return value


# -- what the document becomes on the runtime ---------------------------------------------------

TOOLS_REPLACE_PATHS = ("tools.allow", "tools.deny")


def tools_config_patch(document: dict) -> dict:
    """The config.patch of `tools.*`. Empty allow/deny lists are sent as lists too: an earlier
    version's entries must go (the patch lists their paths in replacePaths)."""
    tools = document["tools"]
    # toolSearch off: the model gets the policy's tools themselves, as on NVIDIA's hosted route
    # (OpenClaw hides them behind tool_search for an NVIDIA provider at any other address).
    return {"tools": {"profile": tools["profile"], "allow": list(tools["allow"]), "deny": list(tools["deny"]),
                      "exec": {"mode": document["exec"]["mode"]}, "toolSearch": False}}


def exec_approvals_file(document: dict, current: dict) -> dict:
    """The runtime's exec approvals file with this policy's defaults and allowlist (for every
    agent of the runtime), keeping what else the runtime stored there."""
    mode = document["exec"]["mode"]
    agents = {k: v for k, v in (current.get("agents") or {}).items() if k != WILDCARD_AGENT}
    agents[WILDCARD_AGENT] = {"allowlist": [dict(rule) for rule in document["exec"]["allow"]]}
    file = {k: v for k, v in current.items() if k not in ("defaults", "agents")}
    file.update({"version": 1, "defaults": {**_EXEC_POLICY[mode], "askFallback": "deny"}, "agents": agents})
    return file


def exec_approvals_match(document: dict, current: dict) -> bool:
    """Whether the runtime's approvals file already says what the policy says (nothing to set)."""
    wanted = exec_approvals_file(document, current)
    wildcard = (current.get("agents") or {}).get(WILDCARD_AGENT) or {}
    defaults = current.get("defaults") or {}
    return (all(defaults.get(k) == v for k, v in wanted["defaults"].items())
            and [_rule(r) for r in wildcard.get("allowlist") or []] == wanted["agents"][WILDCARD_AGENT]["allowlist"])


def _rule(entry: dict) -> dict:
    """An allowlist entry as the policy writes it (the runtime adds bookkeeping such as ids)."""
    return {k: entry[k] for k in ("pattern", "argPattern") if entry.get(k)}
