"""The exact `{success}` bodies of the alert-rule routes, byte for byte."""

from __future__ import annotations

import pytest

from tests.bodies import assert_body
from tests.factories.alerts import make_rule, webhook
from tests.support import client_for

pytestmark = pytest.mark.django_db


def test_test_and_delete_answer_success(tenancy, published):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook")])
    url = f"/api/workspaces/{rule.workspace_id}/alert-rules/{rule.id}"
    admin = client_for(tenancy.admin)

    assert_body(admin.post(f"{url}/test"), {"success": True})
    assert_body(admin.delete(url), {"success": True})
