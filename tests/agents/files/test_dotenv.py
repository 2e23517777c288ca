"""Fleet's block in Hermes's .env: what is outside it is kept, values survive a round trip."""

from __future__ import annotations

import pytest

from integrations.services.runtime import BLOCK_BEGIN, BLOCK_END, _quote, _unquote, split_env_file


@pytest.mark.parametrize("value", ["plain", "with space", "it's", 'say "hi"', "a\\b", "$HOME", "tab\there", ""])
def test_a_value_survives_quoting(value):
    assert _unquote(_quote(value)) == value


def test_single_quotes_are_used_when_they_can_be():
    assert _quote("tok$en") == "'tok$en'"


def test_lines_outside_the_block_are_kept_apart():
    text = f"OWN=1\n{BLOCK_BEGIN}\nA='x'\nB=\n{BLOCK_END}\nOTHER=2\n"

    outside, block = split_env_file(text)

    assert outside.splitlines() == ["OWN=1", "OTHER=2"]
    assert block == {"A": "x", "B": ""}


def test_a_file_without_the_block_is_all_outside():
    assert split_env_file("OWN=1\n") == ("OWN=1", {})
