"""The gateway listener process (Procfile `gateway`): hold this shard's agents' connections.

    manage.py gateway_listener                      # shard GATEWAY_LISTENER_SHARD of GATEWAY_LISTENER_SHARDS
    manage.py gateway_listener --shard 1 --shards 3
    manage.py gateway_listener --once               # one refresh: connect each wanted agent once, report, exit

It runs until SIGTERM or SIGINT, closes every connection and exits 0. See agents/gateway/listener.
"""

from __future__ import annotations

import asyncio

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.gateway.listener import Shard, Supervisor
from agents.gateway.listener.fdlimit import open_files_raise


class Command(BaseCommand):
    help = "Hold WebSocket connections to the running OpenClaw agents that registered hooks want."
    # A long-running process of the Procfile: the system checks are the release step's (migrate),
    # whose warnings (agents.W001, how agents reach the web server) say nothing of this process.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--shard", type=int, help="this listener's shard (default GATEWAY_LISTENER_SHARD)")
        parser.add_argument("--shards", type=int, help="how many listeners (default GATEWAY_LISTENER_SHARDS)")
        parser.add_argument("--once", action="store_true", help="run one refresh cycle, print what it found, exit")

    def handle(self, *args, shard: int | None, shards: int | None, once: bool, **options):
        try:
            supervisor = Supervisor(shard=Shard(
                index=settings.GATEWAY_LISTENER_SHARD if shard is None else shard,
                count=settings.GATEWAY_LISTENER_SHARDS if shards is None else shards,
            ))
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        open_files_raise()  # a socket per held agent: thousands per shard
        if not once:
            asyncio.run(supervisor.run())
            return
        report = asyncio.run(supervisor.run_once())
        self.stdout.write(f"shard {supervisor.shard}: wanted {report.wanted}, connected {report.connected}")
        for agent_id, why in sorted(report.failed.items()):
            self.stdout.write(f"  {agent_id}: {why}")
