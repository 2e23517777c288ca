"""Fleet's blocks in Hermes's .env: what is outside a block is kept where it is, each owner's
block is rewritten in place, values survive a round trip."""

from __future__ import annotations

import pytest

from agents.files.dotenv import block_markers, env_file_render, quote, split_env_file, unquote

BEGIN, END = block_markers("integrations")


@pytest.mark.parametrize("value", ["plain", "with space", "it's", 'say "hi"', "a\\b", "$HOME", "tab\there", ""])
def test_a_value_survives_quoting(value):
    assert unquote(quote(value)) == value


def test_single_quotes_are_used_when_they_can_be():
    assert quote("tok$en") == "'tok$en'"


def test_the_integrations_markers_are_those_of_earlier_releases():
    assert (BEGIN, END) == ("# >>> fleet integrations (managed by Fleet; edits here are replaced) >>>",
                            "# <<< fleet integrations <<<")


def test_lines_outside_the_block_are_kept_apart():
    text = f"OWN=1\n{BEGIN}\nA='x'\nB=\n{END}\nOTHER=2\n"

    before, after, block = split_env_file(text, "integrations")

    assert (before, after) == (["OWN=1"], ["OTHER=2"])
    assert block == {"A": "x", "B": ""}


def test_a_file_without_the_block_is_all_before_it():
    assert split_env_file("OWN=1\n", "integrations") == (["OWN=1"], [], {})


def test_a_block_is_rewritten_where_it_stands_and_another_owners_block_is_kept():
    model_begin, model_end = block_markers("model")
    text = f"OWN=1\n{BEGIN}\nA='x'\n{END}\n{model_begin}\nFLEET_MODEL_API_KEY='old'\n{model_end}\n"

    content, changed, removed = env_file_render(text, "integrations", {"B": "y"})

    assert content == (f"OWN=1\n{BEGIN}\nB='y'\nA=\n{END}\n{model_begin}\nFLEET_MODEL_API_KEY='old'\n{model_end}\n")
    assert (changed, removed) == (["B"], ["A"])
    again, changed, removed = env_file_render(content, "model", {"FLEET_MODEL_API_KEY": "new"})
    assert again == content.replace("'old'", "'new'")
    assert (changed, removed) == (["FLEET_MODEL_API_KEY"], [])


def test_a_block_is_appended_to_a_file_without_it():
    content, changed, _ = env_file_render("OWN=1\n\n", "model", {"K": "v"})
    begin, end = block_markers("model")
    assert content == f"OWN=1\n{begin}\nK='v'\n{end}\n"
    assert env_file_render(content, "model", {"K": "v"})[0] == content  # written once, then unchanged
