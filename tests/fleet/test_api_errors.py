import pytest
from rest_framework.test import APIClient

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.fleet.api_urls")]


@pytest.fixture
def client():
    return APIClient()


def test_malformed_json_is_a_400_validation_error(client):
    response = client.post("/api/echo", data=b'{"name": "x",', content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"error": "Malformed JSON request body.", "code": "validation_error"}


def test_wrong_types_name_the_fields(client):
    response = client.post("/api/echo", {"name": "far too long", "count": "many"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    assert set(body["fields"]) == {"name", "count"}
    assert body["error"].startswith(("name: ", "count: "))


def test_a_valid_body_passes(client):
    response = client.post("/api/echo", {"name": "ok", "count": 3}, format="json")
    assert response.status_code == 200
    assert response.json() == {"name": "ok", "count": 3}


def test_a_wrong_method_is_a_json_405_with_allow(client):
    response = client.delete("/api/echo")
    assert response.status_code == 405
    assert response.json() == {"error": 'Method "DELETE" not allowed.', "code": "method_not_allowed"}
    assert "POST" in response["Allow"]


def test_an_unsupported_content_type_is_a_json_415(client):
    response = client.post("/api/echo", data="name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"
    assert set(response.json()) == {"error", "code"}


def test_an_unhandled_exception_under_api_is_a_json_500(client):
    response = client.get("/api/boom")
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "Internal server error.", "code": "server_error"}


def test_an_api_error_keeps_its_status_code_and_sentence(client):
    response = client.get("/api/conflict")
    assert response.status_code == 409
    assert response.json() == {"error": "The name is taken.", "code": "conflict"}


def test_a_django_404_inside_a_view_is_the_json_not_found(client):
    response = client.get("/api/missing")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}


def test_a_row_removed_by_another_request_is_the_json_not_found(client):
    # Two DELETEs of one Kubernetes cluster at once: the second locked a row that was gone.
    response = client.get("/api/removed-meanwhile")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}


def test_an_unknown_route_is_the_json_not_found(client):
    response = client.post("/api/nothing/here", {}, format="json")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}


def test_an_oversized_body_is_a_json_413_not_a_500(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = client.post("/api/echo", {"name": "x" * 2048, "count": 1}, format="json")
    assert response.status_code == 413
    assert response.json() == {"error": "The request body is too large.", "code": "payload_too_large"}
