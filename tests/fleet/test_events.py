import logging

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


def test_emit_stores_the_event_with_its_fields(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        event = events.emit(
            "agent.error",
            message="Container exited",
            workspace_ids=["b0000000-0000-0000-0000-000000000002", "a0000000-0000-0000-0000-000000000001", "a0000000-0000-0000-0000-000000000001"],
            agent_id="c0000000-0000-0000-0000-000000000003",
            data={"exit_code": 137},
        )
    stored = Event.objects.get(pk=event.pk)
    assert stored.kind == "agent.error"
    assert stored.message == "Container exited"
    assert stored.workspace_ids == ["a0000000-0000-0000-0000-000000000001", "b0000000-0000-0000-0000-000000000002"]
    assert str(stored.agent_id) == "c0000000-0000-0000-0000-000000000003"
    assert stored.data == {"exit_code": 137}
    assert stored.test is False
    assert stored.occurred_at is not None


def test_subscribers_run_only_after_the_transaction_commits(transactional_db, received):
    with transaction.atomic():
        event = events.emit("agent.started")
        assert received == []
    assert [e.pk for e in received] == [event.pk]


def test_a_rolled_back_emit_dispatches_nothing_and_stores_nothing(transactional_db, received):
    with pytest.raises(RuntimeError):
        with transaction.atomic():
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
