"""The one input layer of every JSON route: what no field of ours can hold is refused here with
400 validation_error, before any serializer, service or PostgreSQL sees it.

- numbers: a literal of more than MAX_NUMBER_CHARS characters, an integer outside a signed
  64-bit column, and NaN/Infinity (not JSON);
- NUL characters in any string or key (PostgreSQL text cannot hold them), except in the
  top-level fields a route's input drops control characters from (`control_stripped_fields`
  of the view: fleet.api.fields.StrippedNameField), whose own rule removes them;
- nesting deeper than MAX_DEPTH (and whatever would exhaust the decoder's recursion);
- ISO 8601 date-times that cannot be moved to UTC (year 1 or 9999 with an offset).

`check_query` applies the NUL rule to query strings (FleetAuthentication runs it on every route).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from rest_framework.parsers import JSONParser, get_encoding

from fleet.errors import InvalidRequest

MAX_NUMBER_CHARS = 40
MAX_DEPTH = 32
INT64 = 2**63 - 1
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


class BadInput(InvalidRequest):
    """400 validation_error naming no field: the body as a whole is refused."""

    code = "validation_error"


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise BadInput("A number in the body has too many digits.")
    value = int(text)
    if not -INT64 - 1 <= value <= INT64:
        raise BadInput("A number in the body is out of range.")
    return value


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise BadInput("A number in the body has too many digits.")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadInput("A number in the body is out of range.")
    return value


def _parse_constant(name: str):
    raise BadInput(f"{name} is not a JSON number.")


def _check_string(value: str) -> None:
    if "\x00" in value:
        raise BadInput("Text may not contain NUL characters.")
    if len(value) <= 40 and _DATETIME.match(value):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return  # not a date-time we read; the field says what it expects
        if moment.tzinfo is not None:
            try:
                moment.astimezone(UTC)
            except OverflowError:
                raise BadInput("A date-time is outside the calendar once moved to UTC.") from None


def check_value(value, depth: int = 0, *, stripped: frozenset[str] = frozenset()) -> None:
    """Walk a decoded JSON value, refusing what the decoder hooks cannot see. `stripped` names
    top-level keys whose string values may hold NUL: their field drops control characters."""
    if depth > MAX_DEPTH:
        raise BadInput(f"The body is nested more than {MAX_DEPTH} levels deep.")
    if isinstance(value, str):
        _check_string(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_string(key)
            if depth == 0 and key in stripped and isinstance(item, str):
                continue
            check_value(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_value(item, depth + 1)


def loads(text: str | bytes, *, stripped: frozenset[str] = frozenset()):
    try:
        value = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except RecursionError:
        raise BadInput(f"The body is nested more than {MAX_DEPTH} levels deep.") from None
    check_value(value, stripped=stripped)
    return value


class SafeJSONParser(JSONParser):
    """DRF's JSON parser with the checks above (the only parser of the API)."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})  # 415 for a charset that is not text
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError:
            raise BadInput("The body is not valid JSON text.") from None
        view = (parser_context or {}).get("view")
        stripped = frozenset(getattr(view, "control_stripped_fields", ()))
        try:
            return loads(text, stripped=stripped)
        except ValueError:  # JSONDecodeError and int() of a digit string past Python's limit
            raise BadInput("Malformed JSON request body.") from None


def check_query(request) -> None:
    """NUL characters in the query string or path never reach a lookup."""
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in v for v in values):
            raise BadInput("The query string may not contain NUL characters.")
    if "\x00" in request.path:
        raise BadInput("The path may not contain NUL characters.")
