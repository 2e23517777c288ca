"""Defect 10: a key's power is capped by its issuer's current role on every route: a key of
an admin demoted to editor loses the admin-only alert-rule routes at once."""

from __future__ import annotations

import pytest

from alerts.models import AlertRule
from tests.factories.alerts import make_rule, webhook
from tests.factories.workspaces import make_api_key
from tests.support import client_for
from workspaces.models import Membership

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"


def _admins_key(tenancy) -> str:
    scopes = ["agents:read", "agents:write"]
    return make_api_key(workspace=tenancy.workspace, scopes=scopes, created_by=tenancy.admin)[1]


def _demote(user, workspace, role="editor"):
    Membership.objects.filter(workspace=workspace, user=user).update(role=role)


def test_a_demoted_admins_key_cannot_create_alert_rules(tenancy):
    client = client_for(api_key=_admins_key(tenancy))
    _demote(tenancy.admin, tenancy.workspace)

    response = client.post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules",
                           {"name": "x", "eventPattern": "*", "channels": [webhook(HOOK)]}, format="json")

    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert not AlertRule.objects.exists()


@pytest.mark.parametrize(("method", "suffix"), [("patch", ""), ("delete", ""), ("post", "/test")])
def test_a_demoted_admins_key_cannot_change_or_fire_a_rule(tenancy, method, suffix):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    client = client_for(api_key=_admins_key(tenancy))
    _demote(tenancy.admin, tenancy.workspace)

    response = getattr(client, method)(f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}{suffix}",
                                       {"name": "renamed"}, format="json")

    assert response.status_code == 403
    assert AlertRule.objects.filter(pk=rule.pk, name=rule.name).exists()


def test_the_key_still_reads_rules_after_the_demotion(tenancy):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    client = client_for(api_key=_admins_key(tenancy))
    _demote(tenancy.admin, tenancy.workspace, role="viewer")

    response = client.get(f"/api/workspaces/{tenancy.workspace.id}/alert-rules")

    assert response.status_code == 200


def test_an_admins_key_keeps_admin_routes_while_the_issuer_is_admin(tenancy):
    response = client_for(api_key=_admins_key(tenancy)).post(
        f"/api/workspaces/{tenancy.workspace.id}/alert-rules",
        {"name": "x", "eventPattern": "*", "channels": [webhook(HOOK)]}, format="json")

    assert response.status_code == 200
