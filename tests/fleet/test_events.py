import logging
from dataclasses import dataclass

import pytest
from django.db import transaction

from fleet import events
from fleet.models import Event


@pytest.fixture
def received():
    """A subscriber that records what it is handed; unsubscribed afterwards."""
    seen: list[Event] = []
    events.subscribe(seen.append)
    yield seen
    events.unsubscribe(seen.append)


@dataclass
class AgentSummary:
    """Any object with pk, name and status names the agent of an event."""

    pk: str
    name: str
    status: str


def test_emit_stores_the_event_with_its_fields(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        event = events.emit(
            "agent.error",
            message="Container exited",
            workspace_ids=[
                "b0000000-0000-0000-0000-000000000002",
                "a0000000-0000-0000-0000-000000000001",
                "a0000000-0000-0000-0000-000000000001",
            ],
            agent=AgentSummary(pk="c0000000-0000-0000-0000-000000000003", name="scout", status="error"),
            data={"exit_code": 137},
        )
    stored = Event.objects.get(pk=event.pk)
    assert stored.kind == "agent.error"
    assert stored.message == "Container exited"
    assert stored.workspace_ids == ["a0000000-0000-0000-0000-000000000001", "b0000000-0000-0000-0000-000000000002"]
    assert str(stored.agent_id) == "c0000000-0000-0000-0000-000000000003"
    assert stored.data == {
        "exit_code": 137,
        "agent": {"id": "c0000000-0000-0000-0000-000000000003", "name": "scout", "status": "error"},
    }
    assert stored.test is False
    assert stored.occurred_at is not None


def test_subscribers_run_only_after_the_transaction_commits(transactional_db, received):
    with transaction.atomic():
        event = events.emit("agent.started")
        assert received == []
    assert [e.pk for e in received] == [event.pk]


def test_a_rolled_back_emit_dispatches_nothing_and_stores_nothing(transactional_db, received):
    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit("agent.started")
        raise RuntimeError("the operation failed")
    assert received == []
    assert Event.objects.count() == 0


def test_an_emit_in_a_rolled_back_savepoint_is_not_dispatched(transactional_db, received):
    with transaction.atomic():
        kept = events.emit("agent.started")
        try:
            with transaction.atomic():
                events.emit("agent.stopped")
                raise RuntimeError
        except RuntimeError:
            pass
    assert [e.pk for e in received] == [kept.pk]


def test_a_failing_subscriber_does_not_stop_the_others(transactional_db, received, caplog):
    def broken(event):
        raise ValueError("alerting is down")

    events.unsubscribe(received.append)
    events.subscribe(broken)
    events.subscribe(received.append)
    try:
        with caplog.at_level(logging.ERROR, logger="fleet.events"):
            event = events.emit("agent.error")
    finally:
        events.unsubscribe(broken)
    assert [e.pk for e in received] == [event.pk]
    assert "alerting is down" in caplog.text


def test_subscribing_twice_delivers_once(transactional_db, received):
    events.subscribe(received.append)
    events.emit("agent.started")
    assert len(received) == 1


# --- In-transaction subscribers ------------------------------------------------------------


@pytest.fixture
def in_transaction():
    """Register in-transaction subscribers for one test; all unsubscribed afterwards."""
    registered = []

    def register(subscriber):
        events.subscribe(subscriber, in_transaction=True)
        registered.append(subscriber)
        return subscriber

    yield register
    for subscriber in registered:
        events.unsubscribe(subscriber)


def echo(event):
    """An in-transaction subscriber's own row: an Event (fleet has no other model to write)."""
    return Event.objects.create(kind=f"echo.{event.kind}", data={"of": str(event.pk)}, occurred_at=event.occurred_at)


def echoes():
    return list(Event.objects.filter(kind__startswith="echo.").values_list("data__of", flat=True))


def test_an_in_transaction_subscriber_runs_before_the_commit_inside_the_transaction(
    transactional_db, in_transaction, received
):
    seen = []

    @in_transaction
    def record(event):
        stored = Event.objects.filter(pk=event.pk).exists()
        seen.append((event.pk, stored, transaction.get_connection().in_atomic_block))

    with transaction.atomic():
        event = events.emit("agent.started")
        assert seen == [(event.pk, True, True)]  # the row is already there, the commit not yet
        assert received == []
    assert [e.pk for e in received] == [event.pk]


def test_in_autocommit_the_event_and_the_subscribers_rows_are_one_transaction(transactional_db, in_transaction):
    in_transaction(echo)
    in_atomic_block = []
    in_transaction(lambda event: in_atomic_block.append(transaction.get_connection().in_atomic_block))

    event = events.emit("agent.started")

    assert in_atomic_block == [True]  # not autocommit: the echo below commits with the event
    assert echoes() == [str(event.pk)]


def test_a_rollback_of_the_emitters_transaction_undoes_the_subscribers_work_and_dispatches_nothing(
    transactional_db, in_transaction, received
):
    after_commit = []

    @in_transaction
    def write_and_defer(event):
        echo(event)
        transaction.on_commit(lambda: after_commit.append(event.pk))

    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit("agent.started")
        raise RuntimeError("the operation failed")

    assert Event.objects.count() == 0
    assert after_commit == [] and received == []


def test_a_failing_in_transaction_subscriber_rolls_back_only_its_own_work(
    transactional_db, in_transaction, received, caplog
):
    deferred = []

    @in_transaction
    def broken(event):
        echo(event)
        transaction.on_commit(lambda: deferred.append("broken"))
        with transaction.get_connection().cursor() as cursor:  # a failed statement, as a real fault would be
            cursor.execute("SELECT * FROM no_such_table")

    @in_transaction
    def healthy(event):
        echo(event)
        transaction.on_commit(lambda: deferred.append("healthy"))

    with caplog.at_level(logging.ERROR, logger="fleet.events"), transaction.atomic():
        event = events.emit("agent.error")
        Event.objects.create(kind="after.emit", occurred_at=event.occurred_at)  # the transaction still works

    assert "no_such_table" in caplog.text and "broken" in caplog.text
    assert echoes() == [str(event.pk)]  # the healthy subscriber's row alone
    assert Event.objects.filter(kind__in=["agent.error", "after.emit"]).count() == 2
    assert deferred == ["healthy"]  # the failed savepoint took its on_commit callback with it
    assert [e.pk for e in received] == [event.pk]


def test_unsubscribe_removes_an_in_transaction_subscriber(transactional_db, in_transaction):
    in_transaction(echo)
    events.unsubscribe(echo)

    events.emit("agent.started")

    assert echoes() == []


def test_subscribing_in_transaction_twice_runs_once(transactional_db, in_transaction):
    in_transaction(echo)
    in_transaction(echo)

    event = events.emit("agent.started")

    assert echoes() == [str(event.pk)]
