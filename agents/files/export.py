"""The export of an agent: its bundle, built whole on disk before the first byte is answered.

A running runtime rewrites files of its state while the engine archives them, and the engine
ends its archive early when a file shrank under it. Streaming the bundle as the archive arrived
would answer 200 with a broken file in that case; spooling it first lets a cut archive be asked
for again, and an engine that never gives a whole one be an error the client sees.
"""

from __future__ import annotations

import logging
import tempfile
from contextlib import ExitStack
from typing import BinaryIO

from django.conf import settings

from ..models import Agent
from .bundle import StateArchiveCut, bundle_write, manifest_for
from .errors import StateKeptChanging
from .state import state_export

logger = logging.getLogger(__name__)


def agent_export(*, agent: Agent) -> BinaryIO:
    """The agent's `.tar.gz` bundle in a temporary file, at its start (the caller closes it)."""
    manifest = manifest_for(agent)
    attempts = settings.AGENT_EXPORT_ATTEMPTS
    with ExitStack() as cleanup:
        spool = cleanup.enter_context(tempfile.TemporaryFile(prefix="fleet-export-"))
        for attempt in range(1, attempts + 1):
            spool.seek(0)
            spool.truncate()
            try:
                bundle_write(manifest, state_export(agent=agent), spool)
            except StateArchiveCut as exc:
                logger.info("Export of agent %s: the engine's archive was cut (%s), attempt %d of %d.",
                            agent.pk, exc, attempt, attempts)
                continue
            spool.seek(0)
            cleanup.pop_all()  # the answer closes it once sent
            return spool
    raise StateKeptChanging(f"The engine could not archive the agent's state whole in {attempts} attempts: "
                            "its files kept changing while they were read. Stop the agent, or try again.")
