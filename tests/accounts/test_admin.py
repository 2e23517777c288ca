import base64

import pytest

from accounts.models import User
from tests.factories.accounts import DEFAULT_PASSWORD, AdminFactory, UserFactory
from tests.support import inline_management_forms

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/accounts/user/"
ADD = "/admin/accounts/user/add/"


@pytest.fixture
def admin_client(client, platform_admin):
    client.force_login(platform_admin)
    return client


def test_the_console_has_a_clear_title_and_home(admin_client):
    page = admin_client.get("/admin/").content.decode()
    assert "Fleet control plane" in page
    assert "Operating the fleet" in page
    assert "Django administration" not in page
    assert "<title>" in page and "Fleet admin" in page


def test_a_platform_admin_signs_in_with_email_and_password(client):
    AdminFactory(email="ops@example.com")
    response = client.post("/admin/login/?next=/admin/", {"username": "ops@example.com", "password": DEFAULT_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_signing_in_at_the_login_page_itself_lands_on_the_dashboard(client):
    AdminFactory(email="ops@example.com")
    response = client.post("/admin/login/", {"username": "ops@example.com", "password": DEFAULT_PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/admin/"  # not /accounts/profile/


def test_a_regular_user_cannot_enter_the_console(client):
    client.force_login(UserFactory())
    response = client.get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert client.get(CHANGELIST).status_code == 302


def test_the_user_list_searches_email_and_name(admin_client):
    UserFactory(email="alice@example.com", name="Alice")
    UserFactory(email="bob@example.com", name="Robert")
    page = admin_client.get(CHANGELIST, {"q": "robert"}).content.decode()
    assert "bob@example.com" in page and "alice@example.com" not in page
    page = admin_client.get(CHANGELIST, {"q": "alice@"}).content.decode()
    assert "alice@example.com" in page and "bob@example.com" not in page


@pytest.mark.parametrize("query, shown, hidden", [
    ({"role__exact": "admin"}, "boss@example.com", "plain@example.com"),
    ({"provider__exact": "github"}, "octo@example.com", "plain@example.com"),
    ({"is_active__exact": "0"}, "gone@example.com", "plain@example.com"),
])
def test_the_user_list_filters_role_provider_and_status(admin_client, query, shown, hidden):
    UserFactory(email="plain@example.com")
    AdminFactory(email="boss@example.com")
    UserFactory(email="octo@example.com", provider="github")
    UserFactory(email="gone@example.com", is_active=False)
    page = admin_client.get(CHANGELIST, query).content.decode()
    assert shown in page and hidden not in page


def add_user(client, **fields):
    data = {"email": "new@example.com", "name": "New", "role": "user", "usable_password": "true",
            "password1": "a fine password", "password2": "a fine password", **fields}
    return client.post(ADD, data)


def test_it_creates_a_user_with_a_password(admin_client):
    response = add_user(admin_client, role="admin")
    assert response.status_code == 302
    user = User.objects.get(email="new@example.com")
    assert user.role == "admin" and user.name == "New"
    assert user.check_password("a fine password")


@pytest.mark.parametrize("fields", [
    {"password1": "short", "password2": "short"},
    {"password1": "p" * 129, "password2": "p" * 129},
    {"password2": "does not match"},
    {"email": "not an email"},
    {"email": "TAKEN@example.com"},
])
def test_it_refuses_a_bad_new_user(admin_client, fields):
    UserFactory(email="taken@example.com")
    response = add_user(admin_client, **fields)
    assert response.status_code == 200  # the form again, with errors
    assert "errornote" in response.content.decode()
    assert not (
        User.objects.filter(email__iexact=fields.get("email", "new@example.com"))
        .exclude(email="taken@example.com")
        .exists()
    )


def test_the_change_page_shows_the_avatar_and_edits_the_role(admin_client):
    avatar = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    user = UserFactory(avatar=avatar)
    url = f"/admin/accounts/user/{user.pk}/change/"
    page = admin_client.get(url).content.decode()
    assert f'src="{avatar}"' in page
    response = admin_client.post(url, {"email": user.email, "name": "Renamed", "role": "admin", "is_active": "on",
                                       **inline_management_forms(page)})
    assert response.status_code == 302
    user.refresh_from_db()
    assert (user.name, user.role, user.avatar) == ("Renamed", "admin", avatar)
    assert user.check_password(DEFAULT_PASSWORD)


def test_the_change_page_refuses_another_users_email(admin_client):
    UserFactory(email="taken@example.com")
    user = UserFactory()
    url = f"/admin/accounts/user/{user.pk}/change/"
    response = admin_client.post(url, {"email": "Taken@Example.com", "role": "user", "is_active": "on",
                                       **inline_management_forms(admin_client.get(url).content.decode())})
    assert response.status_code == 200 and "email" in response.context["adminform"].form.errors
    user.refresh_from_db()
    assert user.email != "Taken@Example.com"


def test_an_admin_sets_a_users_password(admin_client):
    user = UserFactory()
    response = admin_client.post(
        f"/admin/accounts/user/{user.pk}/password/",
        {"password1": "a replaced password", "password2": "a replaced password", "usable_password": "true"},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a replaced password")
