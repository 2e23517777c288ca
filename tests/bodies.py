"""Byte-exact response bodies: what a client receives, key order and number types included.

`response.json() == {...}` cannot tell `1` from `1.0` or `true`, nor see the key order, so the
tests that pin a route's body compare the bytes with the expected JSON written by orjson.
"""

from __future__ import annotations

import orjson


def assert_body(response, expected, *, status: int = 200) -> None:
    assert response.status_code == status, response.content
    written = orjson.dumps(expected)
    assert response.content == written, f"\n   got {response.content.decode()}\nwanted {written.decode()}"
