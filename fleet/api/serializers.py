"""Output serializers and fields shared by every app's routes.

Each response shape is one output serializer: the view writes the body with `XOut(obj).data`
and documents it with `extend_schema(responses=XOut)`. The fields below hand values to the
renderer (orjson) as they are, so a timestamp is written as isoformat() (`+00:00`, not DRF's
`Z`) and a number keeps its int or float type: what these bodies have always carried
(tests/bodies.py pins the bytes).
"""

from __future__ import annotations

from rest_framework import serializers

from .fields import IntegerField, NumberField

__all__ = ["IntegerField", "NumberField", "SuccessOut", "TimestampField"]


class TimestampField(serializers.DateTimeField):
    def __init__(self, **kwargs):
        super().__init__(format=None, **kwargs)


class SuccessOut(serializers.Serializer):
    """`{"success": true}`: the answer of routes that only act."""

    success = serializers.BooleanField()
