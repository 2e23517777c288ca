"""A fast JSON renderer (orjson) for every API response."""

from __future__ import annotations

import decimal
import uuid

import orjson
from rest_framework.renderers import BaseRenderer


def _default(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


class FastJSONRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS)


def dumps(data) -> bytes:
    return orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS)
