import pytest

from tests.factories.accounts import DEFAULT_PASSWORD, OAuthUserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

from .conftest import assert_error

URL = "/api/auth/password"
NEW = "a brand new password"
pytestmark = pytest.mark.django_db


def change(client, current=DEFAULT_PASSWORD, new=NEW):
    return client.patch(URL, {"currentPassword": current, "newPassword": new}, format="json")


def test_it_changes_the_password(api_client, user):
    response = change(client_for(user))
    assert response.status_code == 200
    assert response.json() == {"success": True}
    user.refresh_from_db()
    assert user.check_password(NEW)
    login = api_client.post("/api/auth/login", {"email": user.email, "password": NEW}, format="json")
    assert login.status_code == 200


def test_it_refuses_a_wrong_current_password(user):
    assert_error(change(client_for(user), current="not my password"), 401, "invalid_credentials")
    user.refresh_from_db()
    assert user.check_password(DEFAULT_PASSWORD)


def test_it_refuses_an_oauth_only_account():
    oauth_user = OAuthUserFactory(provider="google")
    assert_error(change(client_for(oauth_user), current="whatever it is"), 400, "password_not_set")
    oauth_user.refresh_from_db()
    assert not oauth_user.has_usable_password()


@pytest.mark.parametrize("body, field", [
    ({"newPassword": NEW}, "currentPassword"),
    ({"currentPassword": DEFAULT_PASSWORD}, "newPassword"),
    ({"currentPassword": DEFAULT_PASSWORD, "newPassword": "short"}, "newPassword"),
    ({"currentPassword": DEFAULT_PASSWORD, "newPassword": "x" * 129}, "newPassword"),
    ({"currentPassword": DEFAULT_PASSWORD, "newPassword": None}, "newPassword"),
    ({"currentPassword": 1, "newPassword": ["x" * 10]}, "newPassword"),
])
def test_it_rejects_missing_or_invalid_fields(user, body, field):
    error = assert_error(client_for(user).patch(URL, body, format="json"), 400, "validation_error")
    assert field in error["fields"]
    user.refresh_from_db()
    assert user.check_password(DEFAULT_PASSWORD)


def test_it_accepts_8_and_128_characters(user):
    assert change(client_for(user), new="p" * 8).status_code == 200
    user.refresh_from_db()  # the change ended the session: sign in again
    assert change(client_for(user), current="p" * 8, new="p" * 128).status_code == 200


def test_it_refuses_no_credential(api_client):
    assert_error(change(api_client), 401, "not_authenticated")


def test_it_refuses_a_workspace_api_key_even_with_the_right_password(user):
    workspace = WorkspaceFactory(owner=user)
    _, raw = make_api_key(workspace=workspace, scopes=("agents:write",))
    assert_error(change(client_for(api_key=raw)), 403, "session_required")
    user.refresh_from_db()
    assert user.check_password(DEFAULT_PASSWORD)
