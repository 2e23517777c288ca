"""`make run`'s process manager: honcho, given the time a clean stop needs.

honcho kills (SIGKILL) whatever has not exited five seconds after its SIGTERM, a constant it
offers no option for. The Celery worker's warm shutdown on the embedded filesystem broker takes
about seven seconds (its polling consumer loop, then the pool's threads), so under plain honcho
Ctrl-C ended with the worker killed. Run as `python -m fleet.processes start web worker beat gateway`.
"""

from __future__ import annotations

import sys

import honcho.manager
from honcho.command import main

STOP_GRACE_SECONDS = 20  # a warm shutdown finishes the tasks in progress; then honcho kills

if __name__ == "__main__":
    honcho.manager.KILL_WAIT = STOP_GRACE_SECONDS
    sys.exit(main())
