"""fleet.api.serializers.FlatOutput: fields copied once per class, never shared between answers."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import FlatOutput


class _Out(FlatOutput, serializers.Serializer):
    name = serializers.CharField()
    shout = serializers.SerializerMethodField()

    def get_shout(self, obj) -> str:
        return self.context["mark"] + obj["name"].upper()


class _Nested(FlatOutput, serializers.Serializer):
    inner = _Out()


def test_each_answer_binds_its_own_fields_with_its_own_context():
    first = _Out({"name": "a"}, context={"mark": "!"})
    second = _Out({"name": "b"}, context={"mark": "?"})

    assert (first.data, second.data) == ({"name": "a", "shout": "!A"}, {"name": "b", "shout": "?B"})
    assert first.fields["shout"] is not second.fields["shout"]
    assert first.fields["shout"].parent is first
    assert "_flat_output_fields" in _Out.__dict__


def test_a_serializer_with_a_nested_one_keeps_drfs_deep_copy():
    assert _Nested({"inner": {"name": "c"}}, context={"mark": "~"}).data == {"inner": {"name": "c", "shout": "~C"}}
    assert "_flat_output_fields" not in _Nested.__dict__
