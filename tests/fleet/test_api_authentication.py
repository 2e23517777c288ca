import pytest
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue
from tests.factories.accounts import UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.fleet.api_urls")]


@pytest.fixture
def alice():
    return UserFactory(email="alice@example.com")


@pytest.fixture
def bob():
    return UserFactory(email="bob@example.com")


@pytest.fixture
def bobs_key(bob):
    return make_api_key(workspace=WorkspaceFactory(owner=bob), scopes=("agents:read",))[1]


def whoami(client: APIClient, **headers):
    return client.get("/api/whoami", **headers)


def with_cookie(user_or_token) -> APIClient:
    client = APIClient()
    token = user_or_token if isinstance(user_or_token, str) else session_token_issue(user=user_or_token)
    client.cookies["service_auth"] = token
    return client


def test_a_bearer_session_authenticates(alice):
    response = whoami(client_for(alice))
    assert response.status_code == 200
    assert response.json() == {"email": "alice@example.com", "kind": "session"}


@pytest.mark.parametrize("header", ["X-Api-Key", "X-Service-Api-Key"])
def test_an_api_key_authenticates_in_either_header(bobs_key, header):
    response = whoami(client_for(api_key=bobs_key, header=header))
    assert response.json() == {"email": "bob@example.com", "kind": "api_key"}


def test_the_cookie_authenticates_when_no_header_is_sent(alice):
    assert whoami(with_cookie(alice)).json()["email"] == "alice@example.com"


def test_a_bearer_header_beats_the_cookie(alice, bob):
    client = with_cookie(alice)
    response = whoami(client, HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=bob)}")
    assert response.json() == {"email": "bob@example.com", "kind": "session"}


def test_an_api_key_header_beats_the_cookie(alice, bobs_key):
    response = whoami(with_cookie(alice), HTTP_X_API_KEY=bobs_key)
    assert response.json() == {"email": "bob@example.com", "kind": "api_key"}


def test_a_broken_cookie_is_ignored_when_a_header_is_sent(bob):
    response = whoami(with_cookie("garbage"), HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=bob)}")
    assert response.status_code == 200


def test_a_broken_cookie_alone_is_invalid_credentials():
    response = whoami(with_cookie("garbage"))
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"


def test_a_bearer_and_an_api_key_together_conflict_before_either_is_verified():
    response = whoami(APIClient(), HTTP_AUTHORIZATION="Bearer not-even-a-jwt", HTTP_X_API_KEY="fk_unknown")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Send one credential: conflicting explicit credentials were given.",
        "code": "conflicting_auth",
    }


def test_a_valid_bearer_and_a_valid_key_together_still_conflict(alice, bobs_key):
    response = whoami(client_for(alice), HTTP_X_API_KEY=bobs_key)
    assert response.status_code == 400
    assert response.json()["code"] == "conflicting_auth"


def test_two_different_api_keys_conflict(bobs_key):
    response = whoami(APIClient(), HTTP_X_API_KEY=bobs_key, HTTP_X_SERVICE_API_KEY="fk_another")
    assert response.status_code == 400
    assert response.json()["code"] == "conflicting_auth"


def test_the_same_api_key_in_both_headers_is_one_credential(bobs_key):
    response = whoami(APIClient(), HTTP_X_API_KEY=bobs_key, HTTP_X_SERVICE_API_KEY=bobs_key)
    assert response.json()["kind"] == "api_key"


def test_no_credential_is_not_authenticated():
    response = whoami(APIClient())
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_AUTHORIZATION": "Basic YWxpY2U6cHc="},
        {"HTTP_AUTHORIZATION": "Bearer"},
        {"HTTP_AUTHORIZATION": "Bearer expired.or.forged"},
        {"HTTP_X_API_KEY": "fk_unknown"},
        {"HTTP_X_API_KEY": "not-a-key"},
    ],
)
def test_an_unusable_credential_is_invalid_credentials(headers):
    response = whoami(APIClient(), **headers)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"
    assert set(response.json()) == {"error", "code"}
