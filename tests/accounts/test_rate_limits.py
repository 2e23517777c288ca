"""Per-IP limits: login and oauth-login 20 per 15 minutes; signup 5 per 10 minutes, 20 a day."""

from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from tests.factories.accounts import DEFAULT_PASSWORD, UserFactory

from .conftest import assert_error

pytestmark = pytest.mark.django_db


def client_from(ip: str, **headers) -> APIClient:
    return APIClient(REMOTE_ADDR=ip, **headers)


def login(client):
    return client.post("/api/auth/login", {"email": "me@example.com", "password": DEFAULT_PASSWORD}, format="json")


def signup(client, n):
    return client.post("/api/auth/signup", {"email": f"s{n}@example.com", "password": "a good password"}, format="json")


def assert_limited(response):
    assert_error(response, 429, "rate_limited")
    assert int(response["Retry-After"]) >= 1


def test_login_allows_20_requests_per_15_minutes_per_ip(clock):
    UserFactory(email="me@example.com")
    client = client_from("10.0.0.1")
    assert [login(client).status_code for _ in range(20)] == [200] * 20
    response = login(client)
    assert_limited(response)
    assert 15 * 60 - 1 <= int(response["Retry-After"]) <= 15 * 60
    assert login(client_from("10.0.0.2")).status_code == 200  # another IP is not limited
    clock.advance(timedelta(minutes=15, seconds=1))
    assert login(client).status_code == 200


def test_failed_logins_count_too():
    client = client_from("10.0.0.3")
    for _ in range(20):
        assert_error(login(client), 401, "invalid_credentials")
    assert_limited(login(client))


def test_a_forged_forwarded_for_header_does_not_dodge_the_limit():
    for n in range(20):
        login(client_from("10.0.0.4", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}"))
    assert_limited(login(client_from("10.0.0.4", HTTP_X_FORWARDED_FOR="198.51.100.7")))


def test_oauth_login_allows_20_requests_per_15_minutes_per_ip(settings):
    settings.OAUTH_LOGIN_ENABLED = False  # refused at once, but still counted
    client = client_from("10.0.1.1")
    for _ in range(20):
        assert_error(client.post("/api/auth/oauth-login", {}, format="json"), 403, "oauth_login_disabled")
    assert_limited(client.post("/api/auth/oauth-login", {}, format="json"))


def test_signup_allows_a_burst_of_5_per_10_minutes(selfhosted, clock):
    client = client_from("10.0.2.1")
    assert [signup(client, n).status_code for n in range(5)] == [201] * 5
    assert_limited(signup(client, 5))
    clock.advance(timedelta(minutes=10, seconds=1))
    assert signup(client, 6).status_code == 201


def test_signup_allows_20_per_day(selfhosted, clock):
    start = clock.now()
    client = client_from("10.0.2.2")
    for n in range(20):
        clock.move_to(start + timedelta(minutes=11 * (n // 5)))  # 5 every 11 minutes stays under the burst limit
        assert signup(client, n).status_code == 201
    clock.move_to(start + timedelta(minutes=60))
    response = signup(client, 20)
    assert_limited(response)
    assert int(response["Retry-After"]) > 20 * 3600
    clock.move_to(start + timedelta(days=1, minutes=1))
    assert signup(client, 21).status_code == 201


def test_other_auth_routes_are_not_limited_by_login_attempts():
    client = client_from("10.0.3.1")
    for _ in range(21):
        login(client)
    assert client.get("/api/auth/bootstrap-status").status_code == 200
