import base64

import pytest

from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

from .conftest import assert_error

URL = "/api/auth/profile"
pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def data_url(kind: str, data: bytes) -> str:
    return f"data:image/{kind};base64," + base64.b64encode(data).decode()


def patch(client, body):
    return client.patch(URL, body, format="json")


def test_it_sets_name_and_avatar(user):
    avatar = data_url("png", PNG)
    response = patch(client_for(user), {"name": "  Ada Lovelace ", "avatar": avatar})
    assert response.status_code == 200
    assert response.json() == {"name": "Ada Lovelace", "avatar": avatar}
    user.refresh_from_db()
    assert (user.name, user.avatar) == ("Ada Lovelace", avatar)


def test_it_changes_only_the_fields_sent(user):
    user.avatar = data_url("png", PNG)
    user.save()
    assert patch(client_for(user), {"name": "New"}).json() == {"name": "New", "avatar": user.avatar}


def test_null_removes_the_avatar(user):
    user.avatar = data_url("png", PNG)
    user.save()
    assert patch(client_for(user), {"avatar": None}).json()["avatar"] is None
    user.refresh_from_db()
    assert user.avatar is None


@pytest.mark.parametrize("kind, data", [
    ("jpeg", b"\xff\xd8\xff\xe0" + b"\x00" * 16),
    ("gif", b"GIF89a" + b"\x00" * 16),
    ("webp", b"RIFF\x00\x00\x00\x00WEBPVP8 "),
])
def test_it_accepts_common_image_types(user, kind, data):
    assert patch(client_for(user), {"avatar": data_url(kind, data)}).status_code == 200


def test_it_accepts_an_avatar_of_exactly_500_kb(user):
    prefix = "data:image/png;base64,"
    raw_len = (500 * 1024 - len(prefix)) // 4 * 3
    avatar = data_url("png", PNG + b"\x00" * (raw_len - len(PNG)))
    assert len(avatar) <= 500 * 1024
    assert patch(client_for(user), {"avatar": avatar}).status_code == 200


def test_it_rejects_an_avatar_over_500_kb(user):
    avatar = data_url("png", PNG + b"\x00" * (400 * 1024))
    assert len(avatar) > 500 * 1024
    error = assert_error(patch(client_for(user), {"avatar": avatar}), 400, "validation_error")
    assert "avatar" in error["fields"]


@pytest.mark.parametrize("avatar", [
    "https://example.com/me.png",
    "data:image/png;base64,!!!not-base64!!!",
    "data:image/png;base64,",
    "data:image/png;base64,iVBORw0KGgo=extra",
    "data:text/html;base64," + base64.b64encode(b"<script>").decode(),
    "data:image/svg+xml;base64," + base64.b64encode(b"<svg onload='x'/>").decode(),
    data_url("png", b"GIF89a not a png"),
    "",
    42,
])
def test_it_rejects_an_avatar_that_is_not_a_base64_image(user, avatar):
    error = assert_error(patch(client_for(user), {"avatar": avatar}), 400, "validation_error")
    assert "avatar" in error["fields"]


@pytest.mark.parametrize("name", ["", "   ", "n" * 101, ["Ada"], {"n": 1}])
def test_it_rejects_a_bad_name(user, name):
    error = assert_error(patch(client_for(user), {"name": name}), 400, "validation_error")
    assert "name" in error["fields"]
    user.refresh_from_db()
    assert user.name != name


def test_it_accepts_a_name_of_100_characters(user):
    assert patch(client_for(user), {"name": "n" * 100}).json()["name"] == "n" * 100


def test_it_refuses_no_credential(api_client):
    assert_error(patch(api_client, {"name": "x"}), 401, "not_authenticated")


def test_it_refuses_a_workspace_api_key(user):
    workspace = WorkspaceFactory(owner=user)
    _, raw = make_api_key(workspace=workspace, scopes=("agents:write",))
    assert_error(patch(client_for(api_key=raw), {"name": "Hijack"}), 403, "session_required")
    user.refresh_from_db()
    assert user.name != "Hijack"
