"""A terminal's text frames (agents.terminal.relay.resize_of): a resize within bounds, or nothing."""

from __future__ import annotations

import pytest

from agents.terminal.relay import resize_of


def test_a_resize_frame_gives_columns_and_rows():
    assert resize_of('{"type": "resize", "cols": 132, "rows": 43}') == (132, 43)
    assert resize_of('{"type":"resize","cols":1,"rows":1000,"extra":true}') == (1, 1000)


@pytest.mark.parametrize("text", [
    "", "resize", "null", "[]", '"resize"', '{"type": "resize"}', '{"type": "input", "cols": 80, "rows": 24}',
    '{"type": "resize", "cols": 0, "rows": 24}', '{"type": "resize", "cols": 80, "rows": 1001}',
    '{"type": "resize", "cols": -1, "rows": 24}', '{"type": "resize", "cols": 80.5, "rows": 24}',
    '{"type": "resize", "cols": "80", "rows": 24}', '{"type": "resize", "cols": true, "rows": 24}',
    '{"type": "resize", "cols": 1e3, "rows": 24}', '{"type": "resize", "cols": 80, "rows": 24' + " " * 300 + "}",
    "\udcff",
])
def test_anything_else_is_not_a_resize(text):
    assert resize_of(text) is None
