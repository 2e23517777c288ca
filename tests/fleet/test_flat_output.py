"""fleet.api.serializers.FlatOutput: fields bound once per class, answers as DRF writes them."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from rest_framework import serializers

from fleet.api.serializers import FlatOutput, TimestampField, _answer_plan


class _Plain(serializers.Serializer):
    name = serializers.CharField()
    shout = serializers.SerializerMethodField()
    owner_email = serializers.EmailField(source="owner.email")
    created_at = TimestampField()
    size = serializers.IntegerField(allow_null=True)
    note = serializers.CharField(required=False)  # absent from a dict: skipped
    secret = serializers.CharField(write_only=True, required=False)

    def get_shout(self, obj) -> str:
        return self.context["mark"] + _get(obj, "name").upper()


class _Flat(FlatOutput, _Plain):
    pass


def _get(obj, name):
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


_WHEN = datetime.datetime(2026, 11, 29, 12, 0, tzinfo=datetime.UTC)
_INSTANCES = [
    {"name": "a", "owner": {"email": "a@example.com"}, "created_at": _WHEN, "size": 3, "secret": "s"},
    {"name": "b", "owner": {"email": "b@example.com"}, "created_at": _WHEN, "size": None, "note": "kept"},
    SimpleNamespace(name="c", owner=SimpleNamespace(email="c@example.com"), created_at=_WHEN, size=0, note="",
                    secret="s"),
]


@pytest.mark.parametrize("instance", _INSTANCES)
def test_an_answer_is_what_drf_writes(instance):
    flat = _Flat(instance, context={"mark": "!"}).data
    assert flat == _Plain(instance, context={"mark": "!"}).data
    assert list(flat) == list(_Plain(instance, context={"mark": "!"}).data)  # the same order
    assert "secret" not in flat


def test_each_answer_calls_its_methods_with_its_own_context():
    first = _Flat(_INSTANCES[0], context={"mark": "!"})
    second = _Flat(_INSTANCES[1], context={"mark": "?"})
    assert (first.data["shout"], second.data["shout"]) == ("!A", "?B")


def test_fields_are_bound_once_per_class_and_instances_keep_their_own():
    first, second = _Flat(_INSTANCES[0], context={"mark": "!"}), _Flat(_INSTANCES[1], context={"mark": "?"})
    assert first.data and second.data
    plan = _answer_plan(_Flat)
    assert plan is _answer_plan(_Flat)
    assert [name for name, _field, _method in plan] == ["name", "shout", "owner_email", "created_at", "size", "note"]
    # DRF's per-instance fields are still there for whoever reads them (the schema does)
    assert first.fields["shout"] is not second.fields["shout"]
    assert first.fields["shout"].parent is first


class _Nested(FlatOutput, serializers.Serializer):
    inner = _Flat()


class _Related(FlatOutput, serializers.Serializer):
    link = serializers.HyperlinkedRelatedField(view_name="unused", read_only=True)


class _OwnMethodField(serializers.SerializerMethodField):
    pass


class _WithOwnMethodField(FlatOutput, serializers.Serializer):
    shout = _OwnMethodField(method_name="get_shout")

    def get_shout(self, obj) -> str:
        return self.context["mark"]


def test_a_nested_serializer_a_related_field_or_a_method_field_of_its_own_keeps_drfs_path():
    assert _answer_plan(_Nested) is None and _answer_plan(_Related) is None
    assert _answer_plan(_WithOwnMethodField) is None
    assert _WithOwnMethodField({}, context={"mark": "#"}).data == {"shout": "#"}
    assert _Nested({"inner": _INSTANCES[0]}, context={"mark": "~"}).data["inner"]["shout"] == "~A"
