"""The public /api/health named every user's Remote Docker host
(`remote:<uuid>`) with its state. Anyone but a platform admin's session gets the registered
targets as totals only; the per-target list is the platform admin's."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agents.models import EngineHealth
from tests.factories.remote_hosts import RemoteHostFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def users_host():
    host = RemoteHostFactory()
    now = timezone.now()
    for target_id, state in ((host.execution_target_id, "unreachable"), ("docker", "ok")):
        EngineHealth.objects.create(target_id=target_id, state=state, checked_at=now, changed_at=now)
    return host


def _health(client):
    answer = client.get("/api/health")
    assert answer.status_code in (200, 503), answer.content
    return answer.json()


@pytest.mark.parametrize("who", ["anonymous", "user", "api_key", "broken_credentials"])
def test_anyone_but_a_platform_admin_sees_registered_targets_as_totals(users_host, api_client, tenancy, who):
    client = {
        "anonymous": lambda: api_client,
        "user": lambda: client_for(users_host.owner),  # even the host's own owner: the list is the admin's
        "api_key": lambda: client_for(api_key=tenancy.key("agents:read")),
        "broken_credentials": lambda: client_for(api_key="fleet_nonsense"),
    }[who]()
    body = _health(client)
    assert str(users_host.pk) not in str(body)
    assert body["checks"]["engines"] == {"docker": "ok"}
    assert body["totals"]["engines"] == {"unreachable": 1}
    assert body["status"] == "degraded"  # worked out from every target, listed or not


def test_a_platform_admin_sees_every_target_by_id(users_host, tenancy):
    body = _health(client_for(tenancy.platform_admin))
    assert body["checks"]["engines"] == {"docker": "ok", users_host.execution_target_id: "unreachable"}
    assert body["totals"] == {}
