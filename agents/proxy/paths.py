"""What the proxy will not pass on to a runtime: a path or query that is not a plain URL of the
agent's own UI. Each refusal is a 400 naming what is wrong."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

MAX_TARGET_BYTES = 8192


def path_refusal(raw_path: bytes, query: bytes) -> str | None:
    if len(raw_path) + len(query) > MAX_TARGET_BYTES:
        return f"The path and query are longer than {MAX_TARGET_BYTES} bytes."
    if not raw_path.startswith(b"/") or raw_path.startswith(b"//"):
        return "The path must start with a single /."
    decoded = unquote_to_bytes(raw_path)
    if any(byte < 0x20 or byte == 0x7F for byte in decoded + unquote_to_bytes(query)):
        return "The path or query holds a control character."
    if b".." in decoded.split(b"/") or b"\\" in decoded:
        return "The path may not climb out of the agent's UI (.. or \\)."
    return None
