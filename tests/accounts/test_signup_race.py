"""Two (or more) racing first signups on PostgreSQL: exactly one becomes platform admin."""

import threading

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from accounts.models import User
from tests.support import need_service

SIGNUPS = 4  # under the signup burst limit of 5 per IP


@pytest.mark.django_db(transaction=True)
def test_racing_first_signups_make_exactly_one_admin(selfhosted):
    need_service(connection.vendor == "postgresql", "the signup race needs PostgreSQL (DATABASE_URL)")
    # The real hasher: hashing takes long enough, between the "is it empty?" check and the
    # insert, that without the registration lock every racer would see an empty table.
    selfhosted.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    barrier = threading.Barrier(SIGNUPS)
    statuses: list[int] = []

    def sign_up(n: int) -> None:
        try:
            client = APIClient()
            barrier.wait(timeout=30)
            response = client.post(
                "/api/auth/signup", {"email": f"racer{n}@example.com", "password": "a good password"}, format="json"
            )
            statuses.append(response.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sign_up, args=(n,)) for n in range(SIGNUPS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert statuses == [201] * SIGNUPS
    assert User.objects.count() == SIGNUPS
    assert User.objects.filter(role="admin").count() == 1


@pytest.mark.django_db(transaction=True)
def test_racing_signups_for_one_email_create_one_account(selfhosted):
    need_service(connection.vendor == "postgresql", "the signup race needs PostgreSQL (DATABASE_URL)")
    barrier = threading.Barrier(SIGNUPS)
    statuses: list[int] = []

    def sign_up() -> None:
        try:
            client = APIClient()
            barrier.wait(timeout=30)
            response = client.post(
                "/api/auth/signup", {"email": "Same@example.com", "password": "a good password"}, format="json"
            )
            statuses.append(response.status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sign_up) for _ in range(SIGNUPS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert sorted(statuses) == [201] + [409] * (SIGNUPS - 1)
    assert User.objects.count() == 1
