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


def test_a_deploy_name_loses_them_nul_included(user):
    # The contract strips control characters from the deploy name; the input
    # layer refused a NUL with 400 before the name's own rule could drop it.
    response = client_for(user).post("/api/agents/deploy", {"name": DIRTY}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["name"] == "Alice Bob"


def test_a_deploy_name_of_only_such_characters_gets_a_generated_name(user):
    response = client_for(user).post("/api/agents/deploy", {"name": "\u0000\u202e\u0007"}, format="json")

    assert response.status_code == 201, response.content
    assert response.json()["name"].startswith("openclaw-agent-")


def test_a_nul_elsewhere_in_the_deploy_body_is_still_refused(user):
    response = client_for(user).post("/api/agents/deploy", {"name": "ok", "runtime_family": "hermes\u0000"},
                                     format="json")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
