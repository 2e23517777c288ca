"""Defect 6: logout, password change and an admin's "sign out everywhere" end the user's session
JWTs at once (a per-user token version checked on the user row every request already loads)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.models import User
from accounts.tokens import session_token_issue
from tests.factories.accounts import UserFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db


def bearer(token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_logout_ends_every_session_of_the_user(user):
    phone, laptop = session_token_issue(user=user), session_token_issue(user=user)

    assert bearer(phone).post("/api/auth/logout").status_code == 200

    assert bearer(laptop).get("/api/auth/me").status_code == 401
    assert bearer(phone).get("/api/auth/me").status_code == 401


def test_a_cross_site_logout_by_cookie_ends_nothing(user):
    token = session_token_issue(user=user)
    client = APIClient()
    client.cookies["service_auth"] = token

    client.post("/api/auth/logout", HTTP_ORIGIN="https://evil.example")

    assert bearer(token).get("/api/auth/me").status_code == 200


def test_a_same_origin_cookie_logout_ends_the_sessions(user):
    token = session_token_issue(user=user)
    client = APIClient()
    client.cookies["service_auth"] = token

    client.post("/api/auth/logout", HTTP_ORIGIN="http://testserver")

    assert bearer(token).get("/api/auth/me").status_code == 401


def test_a_password_change_ends_every_session():
    user = UserFactory(password="old-password-1")
    other = session_token_issue(user=user)

    response = client_for(user).patch("/api/auth/password",
                                      {"currentPassword": "old-password-1", "newPassword": "new-password-2"},
                                      format="json")

    assert response.status_code == 200
    assert bearer(other).get("/api/auth/me").status_code == 401
    login = APIClient().post("/api/auth/login", {"email": user.email, "password": "new-password-2"}, format="json")
    assert bearer(login.json()["token"]).get("/api/auth/me").status_code == 200


def test_the_admin_signs_a_user_out_everywhere(client, platform_admin, user):
    token = session_token_issue(user=user)
    client.force_login(platform_admin)

    response = client.post("/admin/accounts/user/", {"action": "sign_out_everywhere", "_selected_action": [user.pk]})

    assert response.status_code == 302
    assert bearer(token).get("/api/auth/me").status_code == 401
    assert User.objects.get(pk=user.pk).token_version == 1


def test_an_admin_setting_a_users_password_ends_their_sessions(client, platform_admin, user):
    token = session_token_issue(user=user)
    client.force_login(platform_admin)

    response = client.post(f"/admin/accounts/user/{user.pk}/password/",
                           {"password1": "brand-new-pass-9", "password2": "brand-new-pass-9"})

    assert response.status_code == 302
    assert bearer(token).get("/api/auth/me").status_code == 401


def test_the_check_costs_no_query_beyond_the_user_row(user):
    client = bearer(session_token_issue(user=user))

    with CaptureQueriesContext(connection) as queries:
        client.get("/api/auth/me")

    assert len(queries) == 1
