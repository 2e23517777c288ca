def test_unknown_api_route_answers_json_404(client):
    response = client.get("/api/no-such-route")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}
