"""The gateway listener (DESIGN.md section 10): `manage.py gateway_listener`, its own Procfile process.

    sharding     which shard holds an agent
    backoff      how long to wait before connecting again
"""

from .backoff import Backoff, backoff_delay
from .sharding import Shard, shard_of

__all__ = ["Backoff", "Shard", "backoff_delay", "shard_of"]
