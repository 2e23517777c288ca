"""Output serializers and fields shared by every app's routes.

Each response shape is one output serializer: the view writes the body with `XOut(obj).data`
and documents it with `extend_schema(responses=XOut)`. The fields below hand values to the
renderer (orjson) as they are, so a timestamp is written as isoformat() (`+00:00`, not DRF's
`Z`) and a number keeps its int or float type: what these bodies have always carried
(tests/bodies.py pins the bytes).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from rest_framework import serializers
from rest_framework.fields import SkipField
from rest_framework.relations import ManyRelatedField, RelatedField

from .fields import IntegerField, NumberField

__all__ = ["FlatOutput", "IntegerField", "NumberField", "SuccessOut", "TimestampField"]


class TimestampField(serializers.DateTimeField):
    def __init__(self, **kwargs):
        super().__init__(format=None, **kwargs)


class SuccessOut(serializers.Serializer):
    """`{"success": true}`: the answer of routes that only act."""

    success = serializers.BooleanField()


class FlatOutput:
    """For an output serializer of plain fields on a hot route: its fields are copied and bound
    once per class, and every answer is written through them. DRF deep-copies and binds every
    field again for each serializer instance, which was more than half of the serializer's
    time in GET /api/agents/:id (23 fields).

    An answer reads each attribute through the class's bound field. A SerializerMethodField's
    method is called on the answering serializer, so it sees that answer's own context. Only a
    field whose value depends on the attribute alone can be shared this way: a nested
    serializer or a related field reads its parent's context or state, so a class with one
    writes its answers as DRF does. `serializer.fields` stays DRF's own, per instance (the
    schema reads it)."""

    def to_representation(self, instance):
        plan = _answer_plan(type(self))
        if plan is None:
            return super().to_representation(instance)
        answer = {}
        for name, field, method in plan:
            if method is not None:
                answer[name] = getattr(self, method)(instance)
                continue
            try:
                attribute = field.get_attribute(instance)
            except SkipField:
                continue
            answer[name] = None if attribute is None else field.to_representation(attribute)
        return answer


# Fields that read their parent's context or state (a request for a link, a nested answer).
_NOT_SHAREABLE = (serializers.BaseSerializer, RelatedField, ManyRelatedField, serializers.HiddenField)


@functools.cache
def _answer_plan(kind: type) -> tuple | None:
    """(name, bound field, method name of a SerializerMethodField or None) per readable field
    of `kind`, in order, bound once to an instance of it; None when a field cannot be shared."""
    fields = kind().fields
    if any(isinstance(field, _NOT_SHAREABLE) or _method_field_of_its_own(field) for field in fields.values()):
        return None
    return tuple(
        (name, field, field.method_name if type(field) is serializers.SerializerMethodField else None)
        for name, field in fields.items()
        if not field.write_only
    )


def _method_field_of_its_own(field) -> bool:
    # A subclass may read its parent differently: only DRF's own is called on the answering serializer.
    return isinstance(field, serializers.SerializerMethodField) and type(field) is not serializers.SerializerMethodField


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
