"""The listener's open-files limit: one socket per held agent, so a shard of 2,500 agents needs
more than the 1,024 most platforms start a process with (systemd, Docker: soft 1,024, hard much
higher). The listener raises its soft limit to the hard one when it starts; a hard limit below
what it holds shows as connections failing with EMFILE, so it is logged."""

from __future__ import annotations

import logging
import resource

logger = logging.getLogger(__name__)


def open_files_raise() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit; the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1_048_576)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError) as exc:  # a sandbox may forbid it: the listener still runs
            logger.warning("Could not raise the open-files limit from %d to %d: %s", soft, wanted, exc)
    return soft
