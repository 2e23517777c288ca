"""The session user cache (accounts.user_cache): a token's user is read once, and every change
to a user is seen by the next request."""

from __future__ import annotations

import os

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts import user_cache
from accounts.tokens import sessions_revoke
from tests.factories.accounts import UserFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    user_cache.users_changed()
    yield
    user_cache.users_changed()


def test_the_user_is_read_once_then_served_from_the_cache():
    client = client_for(UserFactory())
    client.get("/api/auth/me")

    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/auth/me").status_code == 200
    assert [q["sql"] for q in queries.captured_queries if "accounts_user" in q["sql"]] == []


def test_a_revoked_token_is_refused_at_once():
    user = UserFactory()
    client = client_for(user)
    client.get("/api/auth/me")

    sessions_revoke(user=user)

    assert client.get("/api/auth/me").status_code == 401


def test_a_saved_change_shows_on_the_next_request():
    user = UserFactory(name="Before")
    client = client_for(user)
    assert client.get("/api/auth/me").json()["name"] == "Before"

    user.name = "After"
    user.save()
    assert client.get("/api/auth/me").json()["name"] == "After"
    user.is_active = False
    user.save()
    assert client.get("/api/auth/me").status_code == 401


def test_a_change_stamped_by_another_process_empties_this_ones_cache():
    user = UserFactory(name="Before")
    client = client_for(user)
    client.get("/api/auth/me")
    type(user).objects.filter(pk=user.pk).update(name="Elsewhere")  # no signal in this process

    stamp = user_cache._stamp_path()
    later = user_cache._stamp() + 1_000
    stamp.touch()
    os.utime(stamp, ns=(later, later))  # what users_changed() does in the other process

    assert client.get("/api/auth/me").json()["name"] == "Elsewhere"


def test_entries_expire(settings):
    settings.USER_CACHE_SECONDS = 0.0001
    user = UserFactory(name="Before")
    client = client_for(user)
    client.get("/api/auth/me")
    type(user).objects.filter(pk=user.pk).update(name="Later")

    assert client.get("/api/auth/me").json()["name"] == "Later"
