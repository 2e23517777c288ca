import pytest

from alerts.patterns import matching_patterns, pattern_error, pattern_matches, synthetic_test_kind


@pytest.mark.parametrize(
    "pattern, kind, matches",
    [
        ("agent.error", "agent.error", True),
        ("agent.error", "agent.errors", False),
        ("agent.error", "agent.warning", False),
        ("agent.error", "agent", False),
        ("agent.*", "agent.error", True),
        ("agent.*", "agent.budget_exceeded", True),
        ("agent.*", "agent.budget.soft", True),
        ("agent.*", "agent", False),
        ("agent.*", "agents.error", False),
        ("agent.*", "integration.failed", False),
        ("agent.budget.*", "agent.budget.soft", True),
        ("agent.budget.*", "agent.budget_exceeded", False),
        ("*", "agent.error", True),
        ("*", "sandbox.approval_requested", True),
        ("*", "test", True),
        ("integration.failed", "integration.failed", True),
        ("integration.failed", "integration.connected", False),
    ],
)
def test_a_pattern_matches_exactly_the_kinds_it_names(pattern, kind, matches):
    assert pattern_matches(pattern, kind) is matches


@pytest.mark.parametrize(
    "pattern", ["agent.error", "agent.*", "*", "agent.budget_soft_exceeded", "deploy", "a-b.c_d.*"]
)
def test_it_accepts_literals_suffix_globs_and_the_wildcard(pattern):
    assert pattern_error(pattern) is None


@pytest.mark.parametrize(
    "pattern",
    ["", "agent.", ".error", "agent..error", "*.error", "agent.*.x", "agent*", "**", "agent.err*", "agent error",
     "a" * 101],
)
def test_it_rejects_anything_else(pattern):
    assert pattern_error(pattern)


@pytest.mark.parametrize(
    "pattern, kind",
    [("*", "test"), ("agent.*", "agent.test"), ("agent.error", "agent.test"),
     ("agent.budget.*", "agent.budget.test"), ("deploy", "deploy.test")],
)
def test_the_synthetic_test_event_is_named_after_the_pattern_prefix(pattern, kind):
    assert synthetic_test_kind(pattern) == kind


@pytest.mark.parametrize(
    "kind", ["agent.error", "agent", "agent.budget.soft", "agent.budget_exceeded", "agents.error", "test",
             "integration.failed", "a.b.c.d"],
)
def test_the_patterns_matching_a_kind_are_exactly_those_pattern_matches_accepts(kind):
    candidates = ["*", "agent", "agent.*", "agent.error", "agent.budget.*", "agent.budget_exceeded", "agents.*",
                  "a.*", "a.b.*", "a.b.c.*", "a.b.c.d", "a.b.c.d.*", "test", "integration.*", "integration.failed"]

    assert {p for p in matching_patterns(kind) if p in candidates} == {
        p for p in candidates if pattern_matches(p, kind)
    }
