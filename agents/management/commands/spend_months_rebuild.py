"""Recompute the monthly spend rollup from the daily one (agents.usage.store.spend_months_rebuild):
once after the release that added it, when the previous release's processes have stopped."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from agents.usage.store import spend_months_rebuild


class Command(BaseCommand):
    help = ("Set each agent's monthly spend (AgentSpendMonth) to the sum of its days (AgentSpendDay). "
            "Usage ingestion waits while it runs.")

    def handle(self, *args, **options):
        months = spend_months_rebuild()
        self.stdout.write(f"{months} agent months rebuilt from the day rows.")
