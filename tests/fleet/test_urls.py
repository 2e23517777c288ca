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


def test_a_disallowed_host_under_api_gets_the_json_400(client, settings):
    settings.ALLOWED_HOSTS = ["fleet.example.com"]
    response = client.get("/api/health", HTTP_HOST="evil.example.net")
    assert response.status_code == 400
    assert response.json() == {"error": "The request could not be understood.", "code": "bad_request"}


def test_a_disallowed_host_elsewhere_keeps_django_s_page(client, settings):
    settings.ALLOWED_HOSTS = ["fleet.example.com"]
    response = client.get("/admin/", HTTP_HOST="evil.example.net")
    assert response.status_code == 400
    assert not response["Content-Type"].startswith("application/json")


def test_the_500_handler_answers_json_under_api_and_html_elsewhere(rf):
    from fleet.views import server_error

    api = server_error(rf.get("/api/agents"))
    other = server_error(rf.get("/admin/"))

    assert api.status_code == other.status_code == 500
    assert api["Content-Type"] == "application/json"
    assert other["Content-Type"].startswith("text/html")
