"""What a policy document becomes on OpenClaw (sandbox.policy): its tools patch and its exec
approvals file, which keeps what else the runtime stored there."""

from __future__ import annotations

from sandbox.policy import (
    default_policy,
    exec_approvals_file,
    exec_approvals_match,
    policy_validate,
    tools_config_patch,
)


def document(mode: str, allow=()) -> dict:
    return policy_validate({"exec": {"mode": mode, "allow": list(allow)}})


def test_each_exec_mode_maps_to_openclaws_own_security_and_ask():
    expected = {"deny": ("deny", "off"), "allowlist": ("allowlist", "off"), "ask": ("allowlist", "on-miss"),
                "full": ("full", "off")}
    for mode, (security, ask) in expected.items():
        defaults = exec_approvals_file(document(mode), {"version": 1})["defaults"]
        assert (defaults["security"], defaults["ask"], defaults["askFallback"]) == (security, ask, "deny")


def test_the_allowlist_applies_to_every_agent_and_other_entries_are_kept():
    current = {"version": 1, "socket": {"path": "/state/s.sock"},
               "agents": {"main": {"allowlist": [{"pattern": "ls"}]}, "*": {"allowlist": [{"pattern": "old"}]}}}

    file = exec_approvals_file(document("ask", [{"pattern": "node", "argPattern": "^-v$"}]), current)

    assert file["socket"] == {"path": "/state/s.sock"}
    assert file["agents"] == {"main": {"allowlist": [{"pattern": "ls"}]},
                              "*": {"allowlist": [{"pattern": "node", "argPattern": "^-v$"}]}}


def test_a_file_that_already_says_it_needs_no_write():
    wanted = document("ask", [{"pattern": "node"}])
    current = exec_approvals_file(wanted, {"version": 1})
    current["agents"]["*"]["allowlist"][0]["id"] = "runtime-bookkeeping"

    assert exec_approvals_match(wanted, current)
    assert not exec_approvals_match(document("deny"), current)


def test_the_tools_patch_sends_empty_lists_to_clear_earlier_entries():
    patch = tools_config_patch(default_policy())

    assert patch == {"tools": {"profile": "coding", "allow": [], "deny": [], "exec": {"mode": "ask"},
                               "toolSearch": False}}
