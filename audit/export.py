"""The whole selection as CSV or JSON, streamed: rows read in chunks through a server-side
cursor, so memory stays bounded however many rows match."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import orjson
from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from .models import AuditEntry
from .serializers import AuditEntryOut

CHUNK = 500
COLUMNS = tuple(AuditEntryOut().fields)


def _rows(entries: QuerySet[AuditEntry]) -> Iterator[dict]:
    for entry in entries.iterator(chunk_size=CHUNK):
        yield AuditEntryOut(entry).data


def _cell(value) -> str:
    if value is None:
        return ""
    text = ";".join(value) if isinstance(value, list) else str(value)
    # A spreadsheet runs a cell that starts like a formula: an e-mail tried at sign-in is anyone's text.
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv(entries) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for row in _rows(entries):
        writer.writerow([_cell(row[column]) for column in COLUMNS])
        if buffer.tell() > 64_000:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _json(entries) -> Iterator[bytes]:
    yield b"["
    first = True
    for row in _rows(entries):
        yield (b"" if first else b",") + orjson.dumps(row)
        first = False
    yield b"]"


def audit_export(entries: QuerySet[AuditEntry], *, fmt: str) -> StreamingHttpResponse:
    if fmt == "csv":
        response = StreamingHttpResponse(_csv(entries), content_type="text/csv; charset=utf-8")
    else:
        response = StreamingHttpResponse(_json(entries), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="audit.{fmt}"'
    return response
