"""Kernel test fixtures: key rings and a real table with an encrypted field."""

from __future__ import annotations

import base64

import pytest
from django.db import connection


def key_spec(*kids: str) -> str:
    """FLEET_ENCRYPTION_KEYS with one fixed 32-byte key per id (distinct per id)."""
    return ",".join(f"{kid}:{base64.b64encode(kid.encode().ljust(32, b'*')).decode()}" for kid in kids)


@pytest.fixture
def sealed_notes(db, settings):
    """The SealedNote model of a test-only app, installed and with its table created."""
    settings.INSTALLED_APPS = [*settings.INSTALLED_APPS, "tests.fleet.sealedapp"]
    from tests.fleet.sealedapp.models import SealedNote

    # Plain CREATE TABLE inside the test's transaction (SQLite refuses a schema editor
    # context there); the table goes when the transaction is rolled back.
    sql, params = connection.schema_editor().table_sql(SealedNote)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    yield SealedNote
