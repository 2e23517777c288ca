import pytest
from rest_framework.test import APIClient

from fleet.api.throttling import parse_rate


@pytest.mark.parametrize(
    "rate, parsed",
    [
        ("20/15m", (20, 900)), ("5/10m", (5, 600)), ("20/1d", (20, 86400)), ("3/s", (3, 1)), ("60/1m", (60, 60)),
        ("100/2h", (100, 7200)),
    ],
)
def test_parse_rate_reads_count_and_window(rate, parsed):
    assert parse_rate(rate) == parsed


@pytest.mark.parametrize("rate", ["", "20", "20/", "/15m", "20/15x", "20/m15", "-1/1m", "20 /1m"])
def test_parse_rate_refuses_malformed_rates(rate):
    with pytest.raises(ValueError, match="Bad rate"):
        parse_rate(rate)


@pytest.mark.django_db
@pytest.mark.urls("tests.fleet.api_urls")
def test_the_third_request_in_the_window_is_rate_limited_with_retry_after():
    client = APIClient()
    assert [client.get("/api/throttled").status_code for _ in range(2)] == [200, 200]

    response = client.get("/api/throttled")

    assert response.status_code == 429
    assert response.json() == {"error": "Too many requests; try again later.", "code": "rate_limited"}
    assert 1 <= int(response["Retry-After"]) <= 60


@pytest.mark.django_db
@pytest.mark.urls("tests.fleet.api_urls")
def test_the_limit_is_counted_per_client_ip():
    client = APIClient()
    for _ in range(2):
        client.get("/api/throttled", REMOTE_ADDR="10.0.0.1")
    assert client.get("/api/throttled", REMOTE_ADDR="10.0.0.1").status_code == 429
    assert client.get("/api/throttled", REMOTE_ADDR="10.0.0.2").status_code == 200
