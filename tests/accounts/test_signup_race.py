"""Two (or more) racing first signups on PostgreSQL: exactly one becomes platform admin."""

from functools import partial

import pytest
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import User
from tests.support import need_service, run_in_threads

SIGNUPS = 4  # under the signup burst limit of 5 per IP


def sign_up(email: str) -> int:
    response = APIClient().post("/api/auth/signup", {"email": email, "password": "a good password"}, format="json")
    return response.status_code


@pytest.mark.django_db(transaction=True)
def test_racing_first_signups_make_exactly_one_admin(selfhosted):
    need_service(connection.vendor == "postgresql", "the signup race needs PostgreSQL (DATABASE_URL)")
    # The real hasher: hashing takes long enough, between the "is it empty?" check and the
    # insert, that without the registration lock every racer would see an empty table.
    selfhosted.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]

    statuses = run_in_threads(*(partial(sign_up, f"racer{n}@example.com") for n in range(SIGNUPS)), timeout=120)

    assert statuses == [201] * SIGNUPS
    assert User.objects.count() == SIGNUPS
    assert User.objects.filter(role="admin").count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_signups_for_one_email_create_one_account(selfhosted):
    need_service(connection.vendor == "postgresql", "the signup race needs PostgreSQL (DATABASE_URL)")

    statuses = run_in_threads(*[partial(sign_up, "Same@example.com")] * SIGNUPS, timeout=120)

    assert sorted(statuses) == [201] + [409] * (SIGNUPS - 1)
    assert User.objects.count() == 1
