"""README.md and docs/ are self-contained: every relative link resolves to a file of the
repository (and a `#fragment` to a heading of it), and nothing points outside the repository:
no planning document, no "the spec" or "the contract", no issue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
# What sends a reader outside the repository: the documents of the project's planning folder, the
# interface specification the API was built from ("the spec", "the contract's table"), and the
# issues the work was tracked in ("issue 19", "the agents issue"). A document states the rule itself
# or points to the part of docs/ or the README that holds it. Matched across line breaks.
OUTSIDE = re.compile(
    r"\bshared/|\bDESIGN\.md\b|\bRUNTIMES\.md\b|\bCONVENTIONS\.md\b|interface\.md\b"
    r"|\b(?:the|its|this)\s+(?:\w+\s+)?(?:spec|specification|contract)(?:'s)?\b|\b(?:spec|contract)'s\b"
    r"|\binterface\s+specification\b"
    r"|\bissues?\s+#?\d+|\bthe\s+(?:\w+\s+)?issue(?:'s)?\b",
    re.IGNORECASE,
)


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", document.read_text(), flags=re.S)
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def _links(document: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", document.read_text(), flags=re.S)  # not in code blocks
    return LINK.findall(text)


def _broken(document: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in _links(document):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        path, _, fragment = target.partition("#")
        resolved = (document.parent / path).resolve() if path else document
        if root not in resolved.parents and resolved != root:
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors(resolved):
            broken.append(f"{target}: no heading #{fragment}")
    return broken


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(document):
    assert _broken(document) == []


def _cited_outside(text: str) -> list[str]:
    """`line N: "<phrase>"` for each phrase of OUTSIDE, a phrase broken over lines included."""
    return [f"line {text.count(chr(10), 0, match.start()) + 1}: {' '.join(match.group().split())!r}"
            for match in OUTSIDE.finditer(text)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_document_cites_one_outside_the_repository(document):
    assert _cited_outside(document.read_text()) == []


@pytest.mark.parametrize("phrase", [
    "see ../shared/DESIGN.md", "RUNTIMES.md says", "as the spec says", "the spec's table", "the\ncontract's fields",
    "the contract has no route", "the interface specification Fleet implements", "Issue 19: the list",
    "issue 19", "the agents issue's matrix", "the 15 the issue names", "its contract",
])
def test_the_outside_check_catches_each_kind_of_citation(phrase):
    assert _cited_outside(f"Some text, {phrase}, more text.") != []


@pytest.mark.parametrize("phrase", [
    "the key's issuer", "keys issued by the owner", "parse_port_ranges(spec)", "a contracted price",
    "see [api.md](api.md#logs-agentslogs)",
])
def test_the_outside_check_leaves_ordinary_words_alone(phrase):
    assert _cited_outside(f"Some text, {phrase}, more text.") == []


def test_the_check_catches_each_kind_of_broken_link(tmp_path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "a.md").write_text("# A\n\n## The part\n")
    page = repo / "README.md"
    page.write_text("[ok](docs/a.md#the-part) [gone](docs/b.md) [anchor](docs/a.md#nowhere) "
                    "[out](../shared/DESIGN.md) [web](https://example.com/x)\n```\n[code](nope.md)\n```\n")

    assert _broken(page, root=repo) == [
        "docs/b.md: no such file",
        "docs/a.md#nowhere: no heading #nowhere",
        "../shared/DESIGN.md: outside the repository",
    ]
