"""Defect 18: profile names lose control and bidi characters, as workspace names do."""

from __future__ import annotations

import pytest

from tests.support import client_for

pytestmark = pytest.mark.django_db

DIRTY = "Ali\u202ece\u0007\u2066 B\u200fob\u0000"


def test_a_profile_name_loses_control_and_bidi_characters(user):
    response = client_for(user).patch("/api/auth/profile", {"name": DIRTY.replace("\u0000", "")}, format="json")

    assert response.status_code == 200
    assert response.json()["name"] == "Alice Bob"
    user.refresh_from_db()
    assert user.name == "Alice Bob"


def test_a_workspace_name_loses_them_too(user):
    response = client_for(user).post("/api/workspaces", {"name": DIRTY.replace("\u0000", "")}, format="json")

    assert response.json()["name"] == "Alice Bob"


def test_a_name_of_only_such_characters_is_refused(user):
    response = client_for(user).patch("/api/auth/profile", {"name": "\u202e\u0007"}, format="json")

    assert response.status_code == 400
