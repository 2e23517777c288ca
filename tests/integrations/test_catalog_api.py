"""GET /api/integrations/catalog?category="""

from __future__ import annotations

import pytest

from integrations import catalog
from tests.support import client_for

pytestmark = pytest.mark.django_db


def test_the_catalog_lists_every_provider_with_its_fields(user):
    response = client_for(user).get("/api/integrations/catalog")

    assert response.status_code == 200
    body = response.json()
    assert len(body) == len(catalog.providers()) >= 60
    github = next(e for e in body if e["id"] == "github")
    assert github["authType"] == "api_key" and github["category"] == "developer-tools"
    assert github["credentialsUrl"].startswith("https://") and github["setupGuide"]
    assert github["configFields"][0] == {"key": "token", "label": "Personal access token", "type": "password",
                                         "required": True, "secret": True, "env": "GITHUB_TOKEN"}
    x = next(e for e in body if e["id"] == "twitter")
    assert x["authType"] == "oauth2" and x["oauth"]["pkce"] is True


def test_a_category_filters_the_list(user):
    body = client_for(user).get("/api/integrations/catalog", {"category": "developer-tools"}).json()

    assert body and {e["category"] for e in body} == {"developer-tools"}
    assert "github" in {e["id"] for e in body}


def test_an_unknown_category_is_an_empty_list(user):
    response = client_for(user).get("/api/integrations/catalog", {"category": "no-such-thing"})

    assert (response.status_code, response.json()) == (200, [])


@pytest.mark.parametrize("caller", ["viewer", "key:agents:read", "key:workspaces:read", "outsider"])
def test_any_authenticated_caller_reads_the_catalog(tenancy, caller):
    assert tenancy.client(caller).get("/api/integrations/catalog").status_code == 200


def test_without_a_credential_the_catalog_is_refused(tenancy):
    response = tenancy.client("anonymous").get("/api/integrations/catalog")

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
