"""Matching emitted events to rules and creating one delivery per channel."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from alerts.models import Delivery, DeliveryStatus
from alerts.services import deliveries_create
from fleet import events
from tests.factories.alerts import make_rule, webhook
from tests.factories.workspaces import WorkspaceFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"


def emit_and_fan_out(capture, kind, **kwargs):
    with capture(execute=True):
        return events.emit(kind, **kwargs)


def delivered_rules(event) -> set:
    return set(Delivery.objects.filter(event=event).values_list("rule__name", flat=True))


def test_an_event_reaches_every_matching_enabled_rule_of_its_workspaces(tenancy, django_capture_on_commit_callbacks):
    ws, other = tenancy.workspace, tenancy.other_workspace
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="agent.error", name="literal")
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="agent.*", name="glob")
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="*", name="all")
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="agent.warning", name="other kind")
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="integration.*", name="other prefix")
    make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="agent.*", name="disabled", enabled=False)
    make_rule(workspace=other, channels=[webhook(HOOK)], pattern="*", name="second workspace")
    make_rule(workspace=WorkspaceFactory(), channels=[webhook(HOOK)], pattern="*", name="unrelated workspace")

    event = emit_and_fan_out(
        django_capture_on_commit_callbacks, "agent.error", workspace_ids=[ws.id, other.id], message="boom"
    )

    assert delivered_rules(event) == {"literal", "glob", "all", "second workspace"}
    assert set(Delivery.objects.filter(event=event).values_list("status", flat=True)) == {DeliveryStatus.PENDING}


def test_each_channel_of_a_rule_gets_its_own_delivery(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK), webhook("http://127.0.0.1:10/b")])

    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.error", workspace_ids=[tenancy.workspace.id])

    assert Delivery.objects.filter(event=event).values("channel").distinct().count() == 2


def test_an_event_without_workspaces_matches_nothing(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")

    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.error")

    assert not Delivery.objects.filter(event=event).exists()


def test_matching_takes_a_constant_number_of_queries(tenancy):
    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])  # before the rules: no deliveries yet
    for i in range(30):
        make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)] * 3, pattern="agent.*", name=f"r{i}")

    with CaptureQueriesContext(connection) as queries:
        created = deliveries_create(event=event)

    assert len(created) == 90
    assert len(queries) == 1  # INSERT ... SELECT: matching and creating in one statement


def test_the_test_route_fires_a_synthetic_event_to_that_rule_only(tenancy, django_capture_on_commit_callbacks):
    tested = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.error", name="tested",
                       enabled=False)
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*", name="bystander")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(tenancy.admin).post(
            f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{tested.id}/test"
        )

    assert response.status_code == 200
    assert response.json() == {"success": True}
    (delivery,) = Delivery.objects.select_related("event")
    assert delivery.rule_id == tested.id
    assert (delivery.event.kind, delivery.event.test) == ("agent.test", True)
    assert delivery.event.workspace_ids == [str(tenancy.workspace.id)]


def test_a_wildcard_rules_test_event_is_called_test(tenancy, django_capture_on_commit_callbacks):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")

    with django_capture_on_commit_callbacks(execute=True):
        client_for(tenancy.owner).post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test")

    assert Delivery.objects.get().event.kind == "test"


def test_fanning_out_one_event_twice_makes_no_second_delivery(tenancy):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")
    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    deliveries_create(event=event)
    deliveries_create(event=event)

    assert Delivery.objects.filter(event=event).count() == 1
