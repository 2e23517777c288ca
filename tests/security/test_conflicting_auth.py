"""Defect 14: an Authorization header of any scheme beside an API key is 400 conflicting_auth,
before either is verified."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwYXNz", "Bearer x", "Digest a=b", "garbage"])
@pytest.mark.parametrize("header", ["HTTP_X_API_KEY", "HTTP_X_SERVICE_API_KEY"])
def test_any_authorization_beside_a_key_is_conflicting_auth(tenancy, authorization, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=authorization, **{header: tenancy.key("agents:read")})

    response = client.get("/api/agents")

    assert response.status_code == 400
    assert response.json()["code"] == "conflicting_auth"


def test_basic_alone_is_still_invalid_credentials(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")

    response = client.get("/api/agents")

    assert (response.status_code, response.json()["code"]) == (401, "invalid_credentials")
