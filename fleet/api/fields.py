"""Strict input fields for every API route: JSON types are checked, never coerced.

DRF's own fields accept `123` for a string and `true` for a number; a control plane's
inputs should say exactly what they are, so these refuse what is not.
"""

from __future__ import annotations

import math
import unicodedata
from uuid import UUID

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# Bidirectional controls reorder what a reader sees ("Trojan Source"); they are format
# characters (Cf), which also hold legitimate joiners, so they are named one by one.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def without_control_or_bidi(text: str) -> str:
    """`text` without control characters (Cc) and bidirectional controls."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cc" and ch not in BIDI_CONTROLS)


@extend_schema_field(OpenApiTypes.STR)
class StrippedNameField(serializers.Field):
    """A JSON string whose control characters (NUL included) and bidi controls are dropped, as
    the contract says of names such as the deploy name. The input layer lets a NUL through to
    such a field (fleet.api.parsers), since this rule removes it; the service then trims and
    checks the length."""

    strips_controls = True
    default_error_messages = {"invalid": "A string is required."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return without_control_or_bidi(data)

    def to_representation(self, value):
        return value


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans, and drops control and bidi characters."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(without_control_or_bidi(data))



@extend_schema_field(OpenApiTypes.STR)
class RawStringField(serializers.Field):
    """A JSON string taken as sent (no trimming, no null-character refusal): the service
    decides, e.g. stripping control characters from agent names."""

    default_error_messages = {"invalid": "A string is required."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return data

    def to_representation(self, value):
        return value


@extend_schema_field(OpenApiTypes.NUMBER)
class NumberField(serializers.Field):
    """A JSON number (or a numeric string); booleans, NaN and infinities are refused."""

    default_error_messages = {"invalid": "A number is required."}

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        if isinstance(data, str):
            try:
                data = float(data.strip())
            except ValueError:
                self.fail("invalid")
        if not isinstance(data, (int, float)) or not math.isfinite(data):
            self.fail("invalid")
        return float(data)

    def to_representation(self, value):
        return value


@extend_schema_field(OpenApiTypes.INT)
class IntegerField(NumberField):
    default_error_messages = {"invalid": "A whole number is required."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value != int(value):
            self.fail("invalid")
        return int(value)


def uuid_or_none(value) -> UUID | None:
    """A UUID from a path or body value, or None when it is not one (callers answer 404/400)."""
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None
