import pytest

from accounts.tokens import session_token_issue
from tests.factories.accounts import UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

from .conftest import assert_error

URL = "/api/auth/me"
pytestmark = pytest.mark.django_db


def test_it_returns_the_callers_user_record(user):
    response = client_for(user).get(URL)
    assert response.status_code == 200
    assert response.json() == {
        "id": str(user.id),
        "email": user.email,
        "name": user.name,
        "role": "user",
        "provider": None,
        "avatar": None,
        "created_at": user.created_at.isoformat(),
    }


def test_it_shows_each_caller_only_themselves(user):
    other = UserFactory()
    assert client_for(other).get(URL).json()["id"] == str(other.id)
    assert client_for(user).get(URL).json()["id"] == str(user.id)


def test_a_platform_admin_has_role_admin(platform_admin):
    assert client_for(platform_admin).get(URL).json()["role"] == "admin"


def test_it_accepts_the_session_cookie(api_client, user):
    api_client.cookies["service_auth"] = session_token_issue(user=user)
    assert api_client.get(URL).json()["id"] == str(user.id)


def test_it_refuses_no_credential(api_client):
    assert_error(api_client.get(URL), 401, "not_authenticated")


def test_it_refuses_a_garbage_token(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer not-a-jwt")
    assert_error(api_client.get(URL), 401, "invalid_credentials")


def test_it_refuses_a_token_of_a_disabled_user(user):
    client = client_for(user)
    user.is_active = False
    user.save()
    assert_error(client.get(URL), 401, "invalid_credentials")


@pytest.mark.parametrize("header", ["X-Api-Key", "X-Service-Api-Key"])
def test_it_refuses_a_workspace_api_key(header):
    workspace = WorkspaceFactory()
    _, raw = make_api_key(workspace=workspace, scopes=("agents:read", "agents:write", "workspaces:read"))
    assert_error(client_for(api_key=raw, header=header).get(URL), 403, "session_required")


def test_it_refuses_conflicting_credentials(user):
    client = client_for(user)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=user)}", HTTP_X_API_KEY="fk_x")
    assert_error(client.get(URL), 400, "conflicting_auth")
