"""Input fields with the strictness the agent routes need."""

from __future__ import annotations

import math

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


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
