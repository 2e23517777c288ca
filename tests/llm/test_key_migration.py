"""The data migration that moved the sandbox's keys (accounts.ProviderKey) into llm's store
(llm 0002): each becomes its user's own key of that provider, still encrypted, with its dates;
and back again. Run on the real schema with Django's migration executor, then forward to the
latest state for the tests after it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection

from tests.infra.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("accounts", "0004_user_groups"), ("llm", "0001_provider_keys")]
AFTER = [("llm", "0002_move_sandbox_keys")]
SECRET = "nvapi-migrated-0c1d2e3f"
CREATED = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_the_sandbox_keys_move_into_the_store_encrypted_and_back(at_the_latest_state_afterwards):
    apps = migrate(BEFORE)
    user = apps.get_model("accounts", "User").objects.create(email="moved@example.com")
    old = apps.get_model("accounts", "ProviderKey").objects.create(user=user, provider="nvidia", key=SECRET)
    apps.get_model("accounts", "ProviderKey").objects.filter(pk=old.pk).update(created_at=CREATED)

    apps = migrate(AFTER)

    moved = apps.get_model("llm", "ProviderKey").objects.get()
    assert (moved.user_id, moved.provider, moved.label, moved.api_key) == (user.pk, "nvidia", "NVIDIA", SECRET)
    assert moved.created_at == CREATED and moved.workspace_id is None
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key FROM llm_providerkey")
        assert SECRET not in cursor.fetchone()[0]  # re-encrypted, never written in clear

    apps = migrate(BEFORE)  # and back: the sandbox's table holds it again
    assert apps.get_model("accounts", "ProviderKey").objects.get(user_id=user.pk).key == SECRET
