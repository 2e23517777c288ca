import jwt
import pytest
from django.conf import settings

from accounts.models import User
from accounts.tokens import user_from_session_token
from tests.factories.accounts import DEFAULT_PASSWORD, OAuthUserFactory, UserFactory

from .conftest import assert_error
from .hashers import CountingHasher

URL = "/api/auth/login"
pytestmark = pytest.mark.django_db


def login(client, email, password=DEFAULT_PASSWORD):
    return client.post(URL, {"email": email, "password": password}, format="json")


def test_it_returns_a_session_token_valid_for_seven_days(api_client):
    user = UserFactory(email="me@example.com")
    response = login(api_client, "me@example.com")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token"}
    assert user_from_session_token(body["token"]) == user
    claims = jwt.decode(body["token"], options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 7 * 24 * 3600


def test_it_records_the_last_login(api_client):
    user = UserFactory(email="me@example.com")
    assert user.last_login is None
    login(api_client, "me@example.com")
    user.refresh_from_db()
    assert user.last_login is not None
    login(api_client, "me@example.com", "wrong password")
    assert User.objects.get(pk=user.pk).last_login == user.last_login


def test_it_matches_the_email_case_insensitively(api_client):
    UserFactory(email="me@example.com")
    assert login(api_client, "ME@EXAMPLE.COM").status_code == 200


def test_the_token_opens_the_api(api_client):
    UserFactory(email="me@example.com")
    token = login(api_client, "me@example.com").json()["token"]
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api_client.get("/api/auth/me").json()["email"] == "me@example.com"


def test_it_refuses_a_wrong_password(api_client):
    UserFactory(email="me@example.com")
    assert_error(login(api_client, "me@example.com", "wrong password"), 401, "invalid_credentials")


def test_it_refuses_an_unknown_email_with_the_same_answer(api_client):
    UserFactory(email="me@example.com")
    wrong_password = login(api_client, "me@example.com", "wrong password").json()
    unknown = login(api_client, "nobody@example.com").json()
    assert wrong_password == unknown


def test_it_refuses_an_oauth_only_account(api_client):
    user = OAuthUserFactory(email="oauth@example.com")
    user.refresh_from_db()
    assert not user.has_usable_password()
    assert_error(login(api_client, "oauth@example.com"), 401, "invalid_credentials")
    assert_error(login(api_client, "oauth@example.com", "!"), 401, "invalid_credentials")


def test_it_refuses_a_disabled_account(api_client):
    UserFactory(email="gone@example.com", is_active=False)
    assert_error(login(api_client, "gone@example.com"), 401, "invalid_credentials")


@pytest.mark.parametrize("email", ["known@example.com", "nobody@example.com", "oauth@example.com"])
def test_it_runs_the_hasher_once_whatever_the_email(api_client, settings, email):
    settings.PASSWORD_HASHERS = ["tests.accounts.hashers.CountingHasher"]
    UserFactory(email="known@example.com")
    OAuthUserFactory(email="oauth@example.com")
    CountingHasher.calls = 0
    assert_error(login(api_client, email, "a wrong password"), 401, "invalid_credentials")
    assert CountingHasher.calls == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "email"),
        ({"email": "me@example.com"}, "password"),
        ({"password": DEFAULT_PASSWORD}, "email"),
        ({"email": "me@example.com", "password": ""}, "password"),
        ({"email": "not an email", "password": DEFAULT_PASSWORD}, "email"),
        ({"email": "me@example.com", "password": ["x"]}, "password"),
        ({"email": "me@example.com", "password": "p" * 129}, "password"),
    ],
)
def test_it_rejects_missing_or_invalid_fields(api_client, body, field):
    error = assert_error(api_client.post(URL, body, format="json"), 400, "validation_error")
    assert field in error["fields"]


def test_it_ignores_a_stale_cookie(api_client):
    UserFactory(email="me@example.com")
    api_client.cookies[settings.SESSION_COOKIE_NAME_API] = "expired.garbage.token"
    assert login(api_client, "me@example.com").status_code == 200


def test_it_refuses_conflicting_credentials_before_checking_anything(api_client):
    UserFactory(email="me@example.com")
    api_client.credentials(HTTP_AUTHORIZATION="Bearer garbage", HTTP_X_SERVICE_API_KEY="garbage")
    assert_error(login(api_client, "me@example.com"), 400, "conflicting_auth")
