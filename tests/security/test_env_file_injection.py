"""Hermes `.env` injection. The reader split on every Unicode line break and
the writer escaped only LF, so a value holding U+2028 wrote `LD_PRELOAD=...` on a line of its own
at the next sync. Now values with control characters or line breaks are refused at the API
(400 naming the field), one that was stored earlier is left out of the file, and Fleet reads its
block by python-dotenv's own line rule (CR LF, LF, CR)."""

from __future__ import annotations

import pytest

from agents.files.dotenv import block_markers, env_file_render, split_env_file
from integrations.models import Integration
from integrations.services.runtime import ENV_BLOCK
from tests.integrations.support import connect
from tests.support import client_for

pytestmark = pytest.mark.django_db

BLOCK_BEGIN, BLOCK_END = block_markers(ENV_BLOCK)

# (NUL is refused for any JSON body by the input layer: tests/security/test_input_layer.py.)
BREAKS = ["\u2028", "\u2029", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\x1b"]


@pytest.mark.parametrize("brk", BREAKS)
def test_a_value_with_a_line_break_or_control_character_is_refused(tenancy, brk):
    editor = client_for(tenancy.editor)
    value = f"ghp_{'a' * 36}{brk}LD_PRELOAD=/state/evil.so"

    response = connect(editor, tenancy.agent(), "github", {"token": value})

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert "config.token" in response.json()["fields"]
    assert not Integration.objects.exists()


def test_a_stored_value_that_could_end_its_line_is_left_out_of_the_file():
    content, changed, _ = env_file_render("", ENV_BLOCK, {"GOOD": "fine", "BAD": "x\u2028LD_PRELOAD=/state/evil.so"})

    assert changed == ["GOOD"]
    assert "LD_PRELOAD" not in content and "BAD" not in content
    assert content == f"{BLOCK_BEGIN}\nGOOD='fine'\n{BLOCK_END}\n"


def test_the_block_is_read_by_python_dotenv_s_line_breaks_only():
    # Written by hand (or by an older Fleet): U+2028 inside a quoted value is part of the value
    # for python-dotenv, so it is for Fleet too, and a rewrite keeps it within its line.
    text = f"{BLOCK_BEGIN}\nA='x\u2028LD_PRELOAD=/evil.so'\n{BLOCK_END}\n"

    before, after, block = split_env_file(text, ENV_BLOCK)

    assert (before, after) == ([], []) and block == {"A": "x\u2028LD_PRELOAD=/evil.so"}
    content, _, removed = env_file_render(text, ENV_BLOCK, {})
    assert removed == ["A"] and "LD_PRELOAD" not in content
