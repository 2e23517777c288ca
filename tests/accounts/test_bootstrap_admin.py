from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from tests.factories.accounts import AdminFactory, UserFactory

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command("bootstrap_admin", *args, stdout=out)
    return out.getvalue()


def test_it_creates_the_first_platform_admin():
    output = run("--email", "root@example.com", "--password", "a strong secret")
    admin = User.objects.get()
    assert (admin.email, admin.role) == ("root@example.com", "admin")
    assert admin.check_password("a strong secret")
    assert admin.is_staff
    assert "root@example.com" in output


def test_it_reads_email_and_password_from_the_environment(monkeypatch):
    monkeypatch.setenv("FLEET_ADMIN_EMAIL", "env@example.com")
    monkeypatch.setenv("FLEET_ADMIN_PASSWORD", "from the environment")
    run()
    assert User.objects.get().check_password("from the environment")


def test_it_does_nothing_when_an_admin_exists():
    existing = AdminFactory()
    output = run("--email", "second@example.com", "--password", "a strong secret")
    assert "already exists" in output
    assert list(User.objects.all()) == [existing]


def test_it_works_while_signup_is_disabled(settings):
    settings.SIGNUP_ENABLED = False
    run("--email", "root@example.com", "--password", "a strong secret")
    assert User.objects.get().role == "admin"


def test_it_is_idempotent():
    run("--email", "root@example.com", "--password", "a strong secret")
    output = run("--email", "root@example.com", "--password", "another secret")
    assert "nothing to do" in output
    assert User.objects.get().check_password("a strong secret")


def test_it_creates_an_admin_beside_existing_regular_users():
    UserFactory()
    run("--email", "root@example.com", "--password", "a strong secret")
    assert User.objects.get(email="root@example.com").role == "admin"


def test_it_refuses_an_email_a_regular_user_already_has():
    UserFactory(email="taken@example.com")
    with pytest.raises(CommandError, match="already exists"):
        run("--email", "TAKEN@example.com", "--password", "a strong secret")
    assert not User.objects.filter(role="admin").exists()


@pytest.mark.parametrize("args", [
    (),
    ("--email", "root@example.com"),
    ("--password", "a strong secret"),
    ("--email", "not-an-email", "--password", "a strong secret"),
    ("--email", "root@example.com", "--password", "short"),
    ("--email", "root@example.com", "--password", "p" * 129),
])
def test_it_refuses_missing_or_invalid_input(args, monkeypatch):
    monkeypatch.delenv("FLEET_ADMIN_EMAIL", raising=False)
    monkeypatch.delenv("FLEET_ADMIN_PASSWORD", raising=False)
    with pytest.raises(CommandError):
        run(*args)
    assert not User.objects.exists()
