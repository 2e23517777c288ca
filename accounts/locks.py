"""The lock that makes "the first user becomes platform admin" safe against racing signups."""

from __future__ import annotations

from django.db import connection

# An arbitrary, fixed 64-bit key naming the lock in PostgreSQL's advisory-lock space.
FIRST_ADMIN_LOCK_KEY = 0x466C656574_0001  # "Fleet", 1


def registration_lock() -> None:
    """Serialise registrations until the surrounding transaction ends.

    Call inside transaction.atomic(). PostgreSQL: a transaction-level advisory lock, released
    at commit or rollback. SQLite: the settings open every transaction with BEGIN IMMEDIATE,
    which already takes the database's single write lock, so writers are serialised.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [FIRST_ADMIN_LOCK_KEY])
