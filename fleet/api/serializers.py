"""Output serializers and fields shared by every app's routes.

Each response shape is one output serializer: the view writes the body with `XOut(obj).data`
and documents it with `extend_schema(responses=XOut)`. The fields below hand values to the
renderer (orjson) as they are, so a timestamp is written as isoformat() (`+00:00`, not DRF's
`Z`) and a number keeps its int or float type: what these bodies have always carried
(tests/bodies.py pins the bytes).
"""

from __future__ import annotations

import copy
import functools
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
        return {name: _shallow_copy(field) for name, field in template.items()}


def _shallow_copy(field):
    """copy.copy(field) without its generic path (__reduce_ex__, then rebuilding the object from
    the reduction: a fifth of GET /api/agents/:id's serializer for its 23 fields). What it
    gives is the same for a field whose state is its __dict__ alone (DRF's fields: no slots, no
    __copy__ or __setstate__); any other kind of field is copied by copy.copy."""
    kind = type(field)
    if not _plain(kind):
        return copy.copy(field)
    duplicate = kind.__new__(kind)  # as copy.copy makes it (DRF: Field.__new__)
    duplicate.__dict__.update(field.__dict__)
    return duplicate


@functools.cache
def _plain(kind: type) -> bool:
    """Whether copy.copy would copy an instance of `kind` by its __dict__ alone."""
    return (
        not any("__slots__" in vars(klass) for klass in kind.__mro__)
        and not hasattr(kind, "__copy__")
        and not hasattr(kind, "__setstate__")
        and kind.__reduce_ex__ is object.__reduce_ex__
        and kind.__reduce__ is object.__reduce__
        and kind.__getstate__ is object.__getstate__
    )


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
