"""Avatar rules: a `data:image/<type>;base64,<data>` URL of at most 500 KB holding a real image."""

from __future__ import annotations

import base64
import binascii
import re

MAX_AVATAR_LENGTH = 500 * 1024  # the whole data URL, in characters (ASCII, so also bytes)

_DATA_URL = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp|avif);base64,([A-Za-z0-9+/]+={0,2})$")

# The first bytes each accepted type starts with; SVG is refused since it can carry script.
_MAGIC = {
    "png": lambda b: b.startswith(b"\x89PNG\r\n\x1a\n"),
    "jpeg": lambda b: b.startswith(b"\xff\xd8\xff"),
    "gif": lambda b: b.startswith((b"GIF87a", b"GIF89a")),
    "webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP",
    "avif": lambda b: b[4:8] == b"ftyp" and b[8:12] in (b"avif", b"avis"),
}


def avatar_problem(value: str) -> str | None:
    """Why `value` is not an acceptable avatar, or None when it is."""
    if len(value) > MAX_AVATAR_LENGTH:
        return "The avatar must be at most 500 KB."
    match = _DATA_URL.match(value)
    if not match:
        return "The avatar must be a data:image/(png|jpeg|gif|webp|avif);base64,... URL."
    kind, payload = match.groups()
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return "The avatar's base64 data is invalid."
    if not _MAGIC["jpeg" if kind == "jpg" else kind](data):
        return f"The avatar's data is not a {kind} image."
    return None
