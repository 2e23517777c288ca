"""Output serializers and fields shared by every app's routes.

Each response shape is one output serializer: the view writes the body with `XOut(obj).data`
and documents it with `extend_schema(responses=XOut)`. The fields below hand values to the
renderer (orjson) as they are, so a timestamp is written as isoformat() (`+00:00`, not DRF's
`Z`) and a number keeps its int or float type: what these bodies have always carried
(tests/bodies.py pins the bytes).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from rest_framework import serializers

from .fields import IntegerField, NumberField

__all__ = ["FlatOutput", "IntegerField", "NumberField", "SuccessOut", "TimestampField"]


class TimestampField(serializers.DateTimeField):
    def __init__(self, **kwargs):
        super().__init__(format=None, **kwargs)


class SuccessOut(serializers.Serializer):
    """`{"success": true}`: the answer of routes that only act."""

    success = serializers.BooleanField()


class FlatOutput:
    """For an output serializer of plain fields on a hot route: its fields are
    deep-copied once per class, not per answer (DRF rebuilds every field of every serializer
    instance, about a tenth of GET /api/auth/me), and each instance binds shallow copies of
    them. A field holds no per-answer state beyond what binding sets on the copy; a nested
    serializer would (its child stays bound to its first parent), so a class with one keeps
    DRF's deep copy."""

    def get_fields(self):
        cls = type(self)
        template = cls.__dict__.get("_flat_output_fields")
        if template is None:
            template = copy.deepcopy(self._declared_fields)
            if any(isinstance(field, serializers.BaseSerializer) for field in template.values()):
                return template  # nested: no sharing
            cls._flat_output_fields = template
        return {name: copy.copy(field) for name, field in template.items()}


def valid_part(serializer: serializers.Serializer) -> dict:
    """The fields of an invalid input body that passed their own checks, as validated values:
    what a route's further rules can still judge, so one answer names every bad field."""
    if not isinstance(serializer.initial_data, Mapping) or "non_field_errors" in serializer.errors:
        return {}  # not an object at all: no field to judge
    values = {}
    for name, field in serializer.fields.items():
        if name in serializer.errors or field.read_only:
            continue
        raw = field.get_value(serializer.initial_data)
        if raw is serializers.empty:
            continue
        values[field.source] = field.run_validation(raw)
    return values
