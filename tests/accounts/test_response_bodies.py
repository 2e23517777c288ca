"""The exact bodies of the authentication routes, byte for byte (tests.bodies.assert_body)."""

from __future__ import annotations

import pytest

from accounts.models import User
from accounts.tokens import user_from_session_token
from tests.bodies import assert_body
from tests.factories.accounts import DEFAULT_PASSWORD, UserFactory
from tests.support import client_for

from .test_oauth_login import GOOD, github, oauth  # noqa: F401 - fixtures of the fake GitHub

pytestmark = pytest.mark.django_db


def record(user) -> dict:
    return {"id": str(user.id), "email": user.email, "name": user.name, "role": user.role,
            "provider": user.provider, "avatar": user.avatar, "created_at": user.created_at.isoformat()}


def test_bootstrap_status(api_client, selfhosted):
    selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "turnstile"
    selfhosted.TURNSTILE_SITE_KEY, selfhosted.TURNSTILE_SECRET_KEY = "site-key", ""

    assert_body(api_client.get("/api/auth/bootstrap-status"), {
        "needsFirstAdmin": False, "oauthLoginEnabled": False, "platformMode": "selfhosted", "signupEnabled": True,
        "signupBotProtection": {"enabled": True, "provider": "turnstile", "siteKey": "site-key", "configured": False,
                                "configurationError": "TURNSTILE_SECRET_KEY must be set."},
    })


def test_signup(api_client, selfhosted):
    response = api_client.post("/api/auth/signup", {"email": "new@example.com", "password": "long enough"},
                               format="json")

    assert_body(response, {"id": str(User.objects.get().id), "email": "new@example.com"}, status=201)


def test_login(api_client):
    user = UserFactory()

    response = api_client.post("/api/auth/login", {"email": user.email, "password": DEFAULT_PASSWORD}, format="json")

    assert user_from_session_token(response.json()["token"]) == user
    assert_body(response, {"token": response.json()["token"]})


def test_me(user):
    user.avatar = "data:image/png;base64,iVBORw0KGgo="
    user.save()

    assert_body(client_for(user).get("/api/auth/me"), record(user))


def test_profile(user):
    response = client_for(user).patch("/api/auth/profile", {"name": "Ada", "avatar": None}, format="json")

    assert_body(response, {"name": "Ada", "avatar": None})


def test_password(user):
    body = {"currentPassword": DEFAULT_PASSWORD, "newPassword": "another good one"}

    assert_body(client_for(user).patch("/api/auth/password", body, format="json"), {"success": True})


def test_session_upgrade_and_logout(user, api_client):
    assert_body(client_for(user).post("/api/auth/session-upgrade"), {"success": True})
    assert_body(api_client.post("/api/auth/logout"), {"success": True})


@pytest.mark.usefixtures("github")
def test_oauth_login(api_client):
    UserFactory()

    response = api_client.post("/api/auth/oauth-login", {"provider": "github", "oauthAccessToken": GOOD},
                               format="json")

    user = User.objects.get(email="octo@example.com")
    assert user_from_session_token(response.json()["token"]) == user
    assert_body(response, {"token": response.json()["token"], "user": record(user)})
