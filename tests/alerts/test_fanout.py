"""Matching emitted events to rules, a burst at a time, and creating one delivery per channel."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from alerts.models import AlertRule, Delivery, DeliveryStatus
from alerts.services import events_fan_out, fanout_insert
from fleet import events
from fleet.models import Event
from tests.factories.alerts import fan_out, make_rule, webhook
from tests.factories.workspaces import WorkspaceFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"


def emit_and_fan_out(capture, kind, **kwargs):
    with capture(execute=True):
        event = events.emit(kind, **kwargs)
    fan_out()
    return event


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
    made = Delivery.objects.filter(event=event)
    assert set(made.values_list("status", flat=True)) == {DeliveryStatus.PENDING}
    assert not made.filter(queued_at__isnull=True).exists()  # published right after the fan-out's commit


def test_a_glob_matches_deeper_kinds_but_not_its_own_prefix(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.budget.*", name="deep glob")
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.*", name="glob")

    deep = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.budget.exceeded",
                            workspace_ids=[tenancy.workspace.id])
    bare = emit_and_fan_out(django_capture_on_commit_callbacks, "agent", workspace_ids=[tenancy.workspace.id])

    assert delivered_rules(deep) == {"deep glob", "glob"}
    assert delivered_rules(bare) == set()


def test_each_channel_of_a_rule_gets_its_own_delivery(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK), webhook("http://127.0.0.1:10/b")])

    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.error", workspace_ids=[tenancy.workspace.id])

    assert Delivery.objects.filter(event=event).values("channel").distinct().count() == 2


def test_an_event_without_workspaces_matches_nothing_and_is_marked(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")

    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.error")

    assert not Delivery.objects.filter(event=event).exists()
    assert Event.objects.get(pk=event.pk).fanned_out_at is not None


def test_a_burst_of_events_is_matched_in_one_statement(tenancy, django_capture_on_commit_callbacks):
    ws, other = tenancy.workspace, tenancy.other_workspace
    for i, pattern in enumerate(("*", "agent.*", "agent.error", "integration.*", "sandbox.approval_requested")):
        make_rule(workspace=ws, channels=[webhook(HOOK)] * 2, pattern=pattern, name=f"ws {i}")
        make_rule(workspace=other, channels=[webhook(HOOK)], pattern=pattern, name=f"other {i}")
    tested = make_rule(workspace=ws, channels=[webhook(HOOK)], pattern="billing.*", name="tested", enabled=False)
    kinds = ("agent.error", "agent.started", "integration.failed", "sandbox.approval_requested", "engine.down")
    with django_capture_on_commit_callbacks(execute=False):  # emitted, not yet dispatched
        fired = [events.emit(kinds[i % len(kinds)], workspace_ids=[ws.id] + ([other.id] if i % 3 == 0 else []))
                 for i in range(60)]
        fired.append(events.emit("billing.test", workspace_ids=[ws.id], test=True, data={"ruleId": str(tested.id)}))

    with CaptureQueriesContext(connection) as queries:
        made = events_fan_out()

    statements = [q["sql"] for q in queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 2  # the claim (UPDATE ... RETURNING) and the match (INSERT ... SELECT)
    assert statements[0].lstrip().startswith("UPDATE") and "INSERT INTO" in statements[1]
    assert sorted(made.event_ids) == sorted(e.pk for e in fired)
    # Per event: 2 channels for each matching pattern in its workspace, 1 in the other.
    per_kind = {"agent.error": 3, "agent.started": 2, "integration.failed": 2, "sandbox.approval_requested": 2,
                "engine.down": 1}
    expected = sum(per_kind[e.kind] * (2 + (1 if len(e.workspace_ids) == 2 else 0)) for e in fired[:-1]) + 1
    assert len(made.deliveries) == expected == Delivery.objects.count()
    assert set(Delivery.objects.filter(event=fired[-1]).values_list("rule_id", flat=True)) == {tested.id}
    assert not Event.objects.filter(fanned_out_at__isnull=True).exists()


def test_a_fanned_out_event_is_never_matched_again(tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")
    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.error", workspace_ids=[tenancy.workspace.id])

    assert fan_out() == []
    assert Delivery.objects.filter(event=event).count() == 1


def test_matching_an_event_twice_makes_no_second_delivery(tenancy):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")
    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    claimed = fanout_insert.ClaimedEvent(id=event.pk, kind=event.kind, workspace_ids=event.workspace_ids,
                                         test_rule_id=None)

    first = fanout_insert.deliveries_insert(events=[claimed], now=timezone.now())
    second = fanout_insert.deliveries_insert(events=[claimed], now=timezone.now())

    assert (len(first), second) == (1, [])  # the unique (event, channel) pair holds whatever runs twice
    assert Delivery.objects.filter(event=event).count() == 1


def test_malformed_workspace_and_rule_ids_are_skipped_without_stopping_the_burst(tenancy, caplog):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")
    now = timezone.now()
    bad_workspace = Event.objects.create(kind="agent.error", workspace_ids=["not-a-uuid", str(tenancy.workspace.id)],
                                         occurred_at=now)
    bad_test = Event.objects.create(kind="agent.test", workspace_ids=[str(tenancy.workspace.id)], test=True,
                                    data={"ruleId": "nope"}, occurred_at=now)

    made = fan_out()

    assert [d.channel_id for d in made] == [Delivery.objects.get(event=bad_workspace).channel_id]
    assert not Delivery.objects.filter(event=bad_test).exists()
    assert "not-a-uuid" in caplog.text and "'nope'" in caplog.text
    assert not Event.objects.filter(fanned_out_at__isnull=True).exists()


def test_the_test_route_fires_a_synthetic_event_to_that_rule_only(tenancy, published,
                                                                   django_capture_on_commit_callbacks):
    tested = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.error", name="tested",
                       enabled=False)
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*", name="bystander")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(tenancy.admin).post(
            f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{tested.id}/test"
        )

    assert response.status_code == 200
    assert response.json() == {"success": True}
    (delivery,) = Delivery.objects.select_related("event")  # made by the route itself, no dispatch
    assert delivery.rule_id == tested.id
    assert (delivery.event.kind, delivery.event.test) == ("agent.test", True)
    assert delivery.event.workspace_ids == [str(tenancy.workspace.id)]
    assert published.deliveries == [str(delivery.id)] and published.dispatches == 0  # queued on commit
    assert fan_out() == []  # and never matched again by a dispatch


def test_a_test_event_left_to_a_dispatch_still_goes_to_its_rule_only(tenancy, django_capture_on_commit_callbacks):
    tested = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.error", name="tested",
                       enabled=False)
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*", name="bystander")

    event = emit_and_fan_out(django_capture_on_commit_callbacks, "agent.test", workspace_ids=[tenancy.workspace.id],
                             test=True, data={"ruleId": str(tested.id)})

    assert delivered_rules(event) == {"tested"}


def test_a_wildcard_rules_test_event_is_called_test(tenancy, django_capture_on_commit_callbacks):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")

    with django_capture_on_commit_callbacks(execute=True):
        client_for(tenancy.owner).post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test")

    assert Delivery.objects.get().event.kind == "test"


def test_the_claim_and_the_rule_lookup_use_their_indexes(tenancy):
    if connection.vendor != "postgresql":
        pytest.skip("the plans are PostgreSQL's")
    now = timezone.now()
    # A long event log with a few events waiting, and a workspace with many rules.
    Event.objects.bulk_create(Event(kind="agent.error", occurred_at=now, fanned_out_at=now) for _ in range(3000))
    Event.objects.bulk_create(Event(kind="agent.error", occurred_at=now) for _ in range(3))
    AlertRule.objects.bulk_create(AlertRule(workspace=tenancy.workspace, name=f"r{i}", event_pattern=f"kind{i}.*")
                                  for i in range(400))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE fleet_event")
        cursor.execute("ANALYZE alerts_alertrule")
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT id FROM fleet_event WHERE fanned_out_at IS NULL "
                       "ORDER BY occurred_at LIMIT 1000 FOR UPDATE SKIP LOCKED")
        claim = json.dumps(cursor.fetchone()[0])
        cursor.execute("EXPLAIN (FORMAT JSON) SELECT id FROM alerts_alertrule WHERE workspace_id = %s "
                       "AND enabled AND event_pattern = 'kind7.*'", [tenancy.workspace.id])
        rules = json.dumps(cursor.fetchone()[0])

    assert '"Index Name": "fleet_event_to_fan_out"' in claim
    assert '"Index Name": "alerts_rule_match"' in rules
