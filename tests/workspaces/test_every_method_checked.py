"""HEAD, OPTIONS and methods a route lacks go through the same checks as its reading method."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def members_url(tenancy) -> str:
    return f"/api/workspaces/{tenancy.workspace.id}/members"


@pytest.mark.parametrize("method", ["head", "options", "put"])
@pytest.mark.parametrize(
    ("caller", "status"),
    [("anonymous", 401), ("outsider", 404), ("key:agents:read", 403), ("other-key", 403)],
)
def test_a_caller_the_reading_method_refuses_is_refused_on_every_method(tenancy, method, caller, status):
    response = getattr(tenancy.client(caller), method)(members_url(tenancy))

    assert response.status_code == status


@pytest.mark.parametrize(("method", "status"), [("head", 200), ("options", 200), ("put", 405)])
def test_a_caller_the_reading_method_allows_gets_the_methods_answer(tenancy, method, status):
    response = getattr(tenancy.client("viewer"), method)(members_url(tenancy))

    assert response.status_code == status


def test_a_key_on_a_session_only_route_is_refused_on_head_too(tenancy):
    response = tenancy.client("key:agents:write,workspaces:read").head(
        f"/api/workspaces/{tenancy.workspace.id}/api-keys"
    )

    assert response.status_code == 403
