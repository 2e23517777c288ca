"""The admin console: usage is read-only, rate overrides and budgets are managed there."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from agents.models import ModelRate
from tests.agents.usage.helpers import spend
from tests.factories.agents import make_budget

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(tenancy):
    from accounts.models import User

    staff = User.objects.create_superuser(email="root@example.com", password="correct horse battery")
    client = Client()
    client.force_login(staff)
    return client


@pytest.mark.parametrize("page", ["usageevent", "usagedaily", "modelrate", "budget"])
def test_each_page_lists(admin_client, tenancy, page):
    agent = tenancy.agent()
    spend(agent, 1.5)
    make_budget(agent, limit_usd=5)

    assert admin_client.get(f"/admin/agents/{page}/").status_code == 200


def test_usage_rows_cannot_be_added_or_changed(admin_client, tenancy):
    spend(tenancy.agent(), 1)

    assert admin_client.get("/admin/agents/usageevent/add/").status_code == 403
    assert admin_client.get("/admin/agents/usagedaily/add/").status_code == 403


def test_an_operator_adds_a_rate_override(admin_client):
    response = admin_client.post("/admin/agents/modelrate/add/", {
        "model": "gpt-4o", "provider": "", "input_usd_per_mtok": "1.5", "output_usd_per_mtok": "6",
        "effective_from": "2026-01-01", "note": "negotiated",
    })

    assert response.status_code == 302, response.content[:500]
    assert ModelRate.objects.get().input_usd_per_mtok == Decimal("1.5")
