"""The session credential: Bearer vs cookie, session-upgrade, logout, the 7-day lifetime."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tokens import session_token_issue
from tests.factories.accounts import UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for, frozen_clock

from .conftest import assert_error

ME = "/api/auth/me"
UPGRADE = "/api/auth/session-upgrade"
LOGOUT = "/api/auth/logout"
pytestmark = pytest.mark.django_db


class TestSessionUpgrade:
    def test_it_mirrors_the_bearer_token_into_the_cookie(self, user):
        client = client_for(user)
        token = client._credentials["HTTP_AUTHORIZATION"].split(" ", 1)[1]
        response = client.post(UPGRADE)
        assert response.status_code == 200
        assert response.json() == {"success": True}
        cookie = response.cookies["service_auth"]
        assert cookie.value == token
        assert cookie["httponly"] is True and cookie["samesite"] == "Lax"
        assert 7 * 24 * 3600 - 2 <= int(cookie["max-age"]) <= 7 * 24 * 3600

    def test_the_cookie_expires_with_the_token(self, user):
        with frozen_clock(timezone.now() - timedelta(days=5)):
            token = session_token_issue(user=user)
        client = client_for()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        max_age = int(client.post(UPGRADE).cookies["service_auth"]["max-age"])
        assert 2 * 24 * 3600 - 5 <= max_age <= 2 * 24 * 3600

    def test_the_cookie_then_authenticates_on_its_own(self, api_client, user):
        cookie = client_for(user).post(UPGRADE).cookies["service_auth"].value
        api_client.cookies["service_auth"] = cookie
        assert api_client.get(ME).json()["id"] == str(user.id)

    def test_it_needs_a_bearer_token_not_just_the_cookie(self, api_client, user):
        api_client.cookies["service_auth"] = session_token_issue(user=user)
        assert_error(api_client.post(UPGRADE, HTTP_ORIGIN="http://testserver"), 401, "not_authenticated")

    def test_it_refuses_no_credential(self, api_client):
        assert_error(api_client.post(UPGRADE), 401, "not_authenticated")

    def test_it_refuses_an_invalid_bearer_token(self, api_client):
        api_client.credentials(HTTP_AUTHORIZATION="Bearer forged.token.value")
        response = api_client.post(UPGRADE)
        assert_error(response, 401, "invalid_credentials")
        assert "service_auth" not in response.cookies

    def test_it_refuses_an_expired_bearer_token(self, api_client, user):
        with frozen_clock(timezone.now() - timedelta(days=7, seconds=5)):
            token = session_token_issue(user=user)
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        assert_error(api_client.post(UPGRADE), 401, "invalid_credentials")

    def test_it_refuses_a_workspace_api_key(self, user):
        _, raw = make_api_key(workspace=WorkspaceFactory(owner=user))
        response = client_for(api_key=raw).post(UPGRADE)
        assert_error(response, 403, "session_required")
        assert "service_auth" not in response.cookies


class TestLogout:
    def test_it_clears_the_cookie(self, api_client, user):
        api_client.cookies["service_auth"] = session_token_issue(user=user)
        response = api_client.post(LOGOUT)
        assert response.status_code == 200
        assert response.json() == {"success": True}
        cookie = response.cookies["service_auth"]
        assert cookie.value == ""
        assert int(cookie["max-age"]) == 0
        assert cookie["path"] == "/"

    def test_it_needs_no_credential(self, api_client):
        assert api_client.post(LOGOUT).status_code == 200

    def test_it_works_with_an_expired_cookie(self, api_client):
        api_client.cookies["service_auth"] = "expired"
        assert api_client.post(LOGOUT).status_code == 200

    def test_after_logout_the_cookie_no_longer_authenticates(self, api_client, user):
        api_client.cookies["service_auth"] = session_token_issue(user=user)
        api_client.post(LOGOUT)  # the test client applies Set-Cookie like a browser
        assert_error(api_client.get(ME), 401, "not_authenticated")

    def test_it_refuses_conflicting_credentials(self, api_client):
        api_client.credentials(HTTP_X_API_KEY="fk_one", HTTP_X_SERVICE_API_KEY="fk_two")
        assert_error(api_client.post(LOGOUT), 400, "conflicting_auth")


class TestPrecedence:
    def test_an_explicit_bearer_beats_the_cookie(self, user):
        other = UserFactory()
        client = client_for(user)
        client.cookies["service_auth"] = session_token_issue(user=other)
        assert client.get(ME).json()["id"] == str(user.id)

    def test_a_bad_bearer_is_not_rescued_by_a_good_cookie(self, api_client, user):
        api_client.cookies["service_auth"] = session_token_issue(user=user)
        api_client.credentials(HTTP_AUTHORIZATION="Bearer bad")
        assert_error(api_client.get(ME), 401, "invalid_credentials")

    def test_an_api_key_beats_the_cookie(self, user):
        _, raw = make_api_key(workspace=WorkspaceFactory(owner=user))
        client = client_for(api_key=raw)
        client.cookies["service_auth"] = session_token_issue(user=user)
        assert_error(client.get(ME), 403, "session_required")

    @pytest.mark.parametrize("headers", [
        {"HTTP_AUTHORIZATION": "Bearer garbage", "HTTP_X_API_KEY": "garbage"},
        {"HTTP_AUTHORIZATION": "Bearer garbage", "HTTP_X_SERVICE_API_KEY": "garbage"},
        {"HTTP_X_API_KEY": "garbage-1", "HTTP_X_SERVICE_API_KEY": "garbage-2"},
    ])
    @pytest.mark.parametrize("method, path", [
        ("get", ME), ("patch", "/api/auth/profile"), ("patch", "/api/auth/password"), ("post", UPGRADE),
        ("post", LOGOUT), ("post", "/api/auth/login"), ("post", "/api/auth/signup"),
        ("post", "/api/auth/oauth-login"), ("get", "/api/auth/bootstrap-status"),
    ])
    def test_conflicting_explicit_credentials_are_400_before_verification(self, api_client, headers, method, path):
        api_client.credentials(**headers)
        assert_error(getattr(api_client, method)(path, {}, format="json"), 400, "conflicting_auth")

    def test_the_same_key_in_both_key_headers_is_not_a_conflict(self, user):
        _, raw = make_api_key(workspace=WorkspaceFactory(owner=user))
        client = client_for(api_key=raw)
        client.credentials(HTTP_X_API_KEY=raw, HTTP_X_SERVICE_API_KEY=raw)
        assert_error(client.get(ME), 403, "session_required")


class TestLifetime:
    def test_a_token_works_until_seven_days_have_passed(self, user, clock):
        start = clock.now()
        client = client_for(user)
        clock.move_to(start + timedelta(days=7) - timedelta(seconds=1))
        assert client.get(ME).status_code == 200
        clock.move_to(start + timedelta(days=7, seconds=1))
        assert_error(client.get(ME), 401, "invalid_credentials")

    def test_a_login_token_expires_after_seven_days(self, api_client, clock):
        UserFactory(email="me@example.com")
        start = clock.now()
        token = api_client.post(
            "/api/auth/login", {"email": "me@example.com", "password": "correct horse battery"}, format="json"
        ).json()["token"]
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        clock.move_to(start + timedelta(days=6, hours=23))
        assert api_client.get(ME).status_code == 200
        clock.move_to(start + timedelta(days=7, minutes=1))
        assert_error(api_client.get(ME), 401, "invalid_credentials")

    def test_a_token_signed_with_another_key_is_refused(self, api_client, user, settings):
        token = session_token_issue(user=user)
        api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        assert api_client.get(ME).status_code == 200  # verified once, under the old key
        settings.SECRET_KEY = "another-secret-key-entirely-" + "x" * 20
        assert_error(api_client.get(ME), 401, "invalid_credentials")
