"""Which listener holds which agent: a stable hash of the id, so shards never overlap or miss one."""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter

import pytest

from agents.gateway.listener import Shard, shard_of

IDS = [str(uuid.UUID(int=n * 7919 + 1, version=4)) for n in range(1000)]


def test_three_shards_split_a_thousand_agents_with_every_agent_in_exactly_one():
    shards = [Shard(index=i, count=3) for i in range(3)]

    owners = {agent_id: [s.index for s in shards if s.owns(agent_id)] for agent_id in IDS}

    assert all(len(owned) == 1 for owned in owners.values())
    sizes = Counter(owned[0] for owned in owners.values())
    assert sorted(sizes) == [0, 1, 2]
    assert all(250 <= size <= 420 for size in sizes.values()), sizes  # a hash, not an accident


def test_the_same_id_always_lands_in_the_same_shard_and_uuid_or_text_agree():
    agent_id = uuid.uuid4()

    assert {shard_of(agent_id, 5) for _ in range(20)} == {shard_of(str(agent_id), 5)}


def test_the_shard_is_a_fixed_function_of_the_id_so_every_process_and_host_agrees():
    # Literal answers: a salted hash() or another digest would move agents between restarts.
    assert [shard_of("00000000-0000-4000-8000-000000000001", n) for n in (3, 7)] == [2, 2]
    assert [shard_of("2b6f0c5e-8f1d-4d5a-9a3e-1c2d3e4f5a6b", n) for n in (3, 7)] == [0, 6]
    agent_id = IDS[500]
    assert shard_of(agent_id, 11) == int(hashlib.sha256(agent_id.encode()).hexdigest()[:8], 16) % 11


def test_one_shard_holds_everything():
    assert all(Shard().owns(agent_id) for agent_id in IDS[:50])


@pytest.mark.parametrize(("index", "count"), [(3, 3), (-1, 3), (0, 0), (1, -2), ("1", 3), (True, 2)])
def test_an_impossible_shard_is_refused(index, count):
    with pytest.raises(ValueError, match="shard"):
        Shard(index=index, count=count)


def test_the_shard_comes_from_settings(settings):
    settings.GATEWAY_LISTENER_SHARDS, settings.GATEWAY_LISTENER_SHARD = 4, 2

    assert Shard.from_settings() == Shard(index=2, count=4)
