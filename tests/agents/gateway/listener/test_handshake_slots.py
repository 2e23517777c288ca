"""A shard's links handshake a bounded number at a time: thousands started together would each
wait on the others past the open timeout, fail together and come back together."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from agents.gateway.errors import GatewayDropped
from agents.gateway.listener import Backoff
from agents.gateway.listener.link import AgentLink
from agents.gateway.listener.selection import Need

NEED = Need(hooks=("tests.all",), scopes=("operator.read",), caps=())


class SlowGateway:
    """Handshakes that take a while and fail (so each link tries once, then backs off)."""

    def __init__(self):
        self.endpoint = SimpleNamespace(token="t" * 43)
        self.in_flight = self.most_in_flight = self.opened = 0

    def connection(self, scopes, *, caps, on_event):
        return SimpleNamespace(open=self._open)

    async def _open(self):
        self.in_flight += 1
        self.opened += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.02)
        finally:
            self.in_flight -= 1
        raise GatewayDropped("The agent's gateway could not be reached (bench).")


def test_links_started_together_handshake_at_most_the_shards_slots_at_a_time():
    gateway = SlowGateway()

    async def start_twenty() -> None:
        lookups = SimpleNamespace(gateway=lambda agent_id: asyncio.sleep(0, gateway))
        slots = asyncio.Semaphore(3)
        links = [AgentLink(f"agent-{n}", NEED, run_db=None, backoff=Backoff(base=60), lookups=lookups,
                           handshakes=slots) for n in range(20)]
        for link in links:
            link.start()
        await asyncio.wait_for(asyncio.gather(*(link.tried.wait() for link in links)), 5)
        await asyncio.gather(*(link.stop() for link in links))

    asyncio.run(start_twenty())

    assert gateway.opened == 20
    assert gateway.most_in_flight == 3
