import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/api", "/api/", "/api/no/such/route", "/api//health"])
def test_every_unknown_path_under_api_is_the_json_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}


def test_the_health_route_has_no_trailing_slash(client):
    assert client.get("/api/health").status_code in (200, 503)
    assert client.get("/api/health/").status_code == 404
