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


def test_the_fast_copy_of_a_field_is_what_copy_copy_gives():
    import copy

    from fleet.api.serializers import _shallow_copy

    for field in _Out()._declared_fields.values():
        fast, generic = _shallow_copy(field), copy.copy(field)
        assert type(fast) is type(generic) and fast is not field
        assert fast.__dict__ == generic.__dict__


class _Counted(serializers.CharField):
    copies = 0

    def __copy__(self):
        type(self).copies += 1
        duplicate = type(self).__new__(type(self))
        duplicate.__dict__.update(self.__dict__)
        return duplicate


class _WithCounted(FlatOutput, serializers.Serializer):
    name = _Counted()


def test_a_field_with_a_copy_of_its_own_is_copied_by_it():
    before = _Counted.copies
    assert _WithCounted({"name": "d"}).data == {"name": "d"}
    assert _WithCounted({"name": "e"}).data == {"name": "e"}
    assert _Counted.copies == before + 2
