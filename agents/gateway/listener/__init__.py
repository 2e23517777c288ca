"""The gateway listener (docs/patterns.md): `manage.py gateway_listener`, its own Procfile process.

It holds one WebSocket per running OpenClaw agent that a registered hook wants
(agents.gateway.hooks), reconnects with backoff, records each agent's last sign of life
(liveness), and hands events to the hooks. Several listeners split the agents by a stable hash
of the agent id (sharding). Modules, one job each:

    sharding     which shard holds an agent
    backoff      how long to wait before connecting again
    selection    which agents this shard holds and with which grant (database reads)
    lookups      the links' reads of their gateways, many in one query
    dispatch     handing an event to its hooks (worker threads)
    liveness     the last event seen per agent (cache)
    link         one agent's connection loop
    supervisor   the refresh loop over all links, signals, --once
    fdlimit      the open-files limit a shard of thousands of sockets needs
"""

from .backoff import Backoff, backoff_delay
from .liveness import last_event
from .sharding import Shard, shard_of
from .supervisor import CycleReport, Supervisor

__all__ = ["Backoff", "CycleReport", "Shard", "Supervisor", "backoff_delay", "last_event", "shard_of"]
