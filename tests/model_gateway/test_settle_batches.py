"""The edge settles ended calls in batches: each batch waits SETTLE_AFTER_SECONDS, the first and
every one after it, so a steady flow of calls shares transactions instead of being settled one
or two at a time back to back. With the database away the calls stay queued, tried again less
and less often, until their reservations lapse."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from model_gateway import settle as settle_module
from model_gateway.admission import Admission
from model_gateway.settlement import Ended
from model_gateway.traffic import FORWARDED

WAIT = 0.05
WORK = 0.02  # what settling a batch takes


def _ended() -> Ended:
    admission = Admission(request_id=uuid.uuid4(), agent_id=uuid.uuid4(), provider="openai-compatible",
                          model="fleet-fake-1", url="http://127.0.0.1:9/v1/chat/completions", headers={}, body=b"",
                          reserved_micros=0)
    return Ended(admission=admission, usage=None, outcome=FORWARDED)


@pytest.fixture
def batches(monkeypatch):
    """Each batch as the settling thread gets it, with when it started and ended; each takes
    WORK, the first one until `release` is set too."""
    record: list[dict] = []
    release = threading.Event()

    def settle_batch(batch):
        entry = {"calls": len(batch), "started": time.monotonic()}
        record.append(entry)
        if len(record) == 1:
            release.wait(5)
        time.sleep(WORK)
        entry["ended"] = time.monotonic()

    monkeypatch.setattr(settle_module, "_settle_batch", settle_batch)
    monkeypatch.setattr(settle_module, "SETTLE_AFTER_SECONDS", WAIT)
    return record, release


def test_calls_that_end_while_a_batch_settles_wait_for_the_next_batch_together(batches):
    record, release = batches

    async def scenario():
        settle_module.settle_later(_ended())
        while not record:
            await asyncio.sleep(0.005)
        for _ in range(3):  # ended while the first batch is being settled
            settle_module.settle_later(_ended())
        release.set()
        while len(record) < 2 or "ended" not in record[1]:
            await asyncio.sleep(0.005)
        await settle_module.flush()

    asyncio.run(scenario())

    assert [entry["calls"] for entry in record] == [1, 3]
    assert record[1]["started"] - record[0]["ended"] >= WAIT * 0.9


def test_a_steady_flow_of_calls_is_settled_in_few_batches(batches):
    record, release = batches
    release.set()

    async def scenario():
        deadline = time.monotonic() + 10 * WAIT
        while time.monotonic() < deadline:
            settle_module.settle_later(_ended())
            await asyncio.sleep(0.002)
        await settle_module.flush()

    asyncio.run(scenario())

    # Ten waits long: a batch every wait and its work (about seven), never batches back to back
    # (one every WORK: about 25).
    assert sum(entry["calls"] for entry in record) > 50
    assert len(record) <= 10
    before_flush = record[:-1]  # the flush at the end settles at once
    assert all(later["started"] - earlier["ended"] >= WAIT * 0.9
               for earlier, later in zip(before_flush, before_flush[1:], strict=False))


def test_flush_settles_what_is_queued_without_waiting(batches):
    record, release = batches
    release.set()

    async def scenario():
        settle_module.settle_later(_ended())
        settle_module.settle_later(_ended())
        started = time.monotonic()
        await settle_module.flush()
        return time.monotonic() - started

    took = asyncio.run(scenario())

    assert [entry["calls"] for entry in record] == [2]
    assert took < WAIT + WORK


@pytest.fixture
def database_away(monkeypatch):
    """The database away for the first `away[0]` batches: each hands its calls back, as
    _settle_batch does when it cannot reach the database; then every batch is settled."""
    away = [0]
    tried: list[list[uuid.UUID]] = []
    settled: list[uuid.UUID] = []

    def settle_batch(batch):
        tried.append([call.admission.request_id for call in batch])
        if len(tried) <= away[0]:
            return batch
        settled.extend(call.admission.request_id for call in batch)
        return []

    monkeypatch.setattr(settle_module, "_settle_batch", settle_batch)
    monkeypatch.setattr(settle_module, "SETTLE_AFTER_SECONDS", WAIT)
    monkeypatch.setattr(settle_module, "RETRY_AT_MOST_SECONDS", 4 * WAIT)
    return away, tried, settled


def test_with_the_database_away_the_calls_stay_queued_and_are_settled_once_it_answers(database_away):
    away, tried, settled = database_away
    away[0] = 4
    first, second = _ended(), _ended()

    async def scenario():
        settle_module.settle_later(first)
        await asyncio.sleep(WAIT / 2)
        settle_module.settle_later(second)
        while len(settled) < 2:
            await asyncio.sleep(0.005)

    started = time.monotonic()
    asyncio.run(asyncio.wait_for(scenario(), timeout=5))
    took = time.monotonic() - started

    ids = [first.admission.request_id, second.admission.request_id]
    assert tried[:4] == [ids] * 4  # the first call first, the second with it, nothing dropped
    assert sorted(settled) == sorted(ids)
    # Waits of 1, 2, 4, 4 then 4 WAITs: a database away is not asked ten times a second.
    assert took >= 14 * WAIT


def test_a_call_still_unsettled_when_its_reservation_lapses_is_given_up(database_away, settings, caplog):
    away, tried, settled = database_away
    away[0] = 2
    settings.MODEL_GATEWAY_RESERVATION_SECONDS = 60
    lapsed = dataclasses.replace(_ended(), at=timezone.now() - timedelta(seconds=61))
    held = _ended()

    async def scenario():
        settle_module.settle_later(lapsed)
        settle_module.settle_later(held)
        while not settled:
            await asyncio.sleep(0.005)

    asyncio.run(asyncio.wait_for(scenario(), timeout=5))

    assert settled == [held.admission.request_id]
    assert str(lapsed.admission.request_id) in caplog.text


def test_flush_with_the_database_away_tries_once_and_returns(database_away, caplog):
    away, tried, settled = database_away
    away[0] = 100

    async def scenario():
        settle_module.settle_later(_ended())
        await settle_module.flush()

    asyncio.run(asyncio.wait_for(scenario(), timeout=5))

    assert len(tried) == 1 and not settled
    assert "1 model calls were not settled" in caplog.text
