"""Beat's scheduler (the Procfile's `beat`): django-celery-beat's DatabaseScheduler, writing a
job's new `last_run_at` before it sends the job instead of after.

The stock scheduler sends first and writes the row afterwards (at its sync, CELERY_BEAT_SYNC_EVERY
sends): a beat killed between the two (SIGKILL, a lost host, an OOM kill) comes back to the old
`last_run_at` and sends the job again at once, two runs in one period (tests/faults/
test_beat_killed.py). Written first, a kill in between loses that one tick instead,
which the next period makes up and `checks.scheduler` tolerates (late after three periods). While
the database cannot be written the row is left to the stock sync, as before.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, InterfaceError
from django_celery_beat.schedulers import DatabaseScheduler as StockDatabaseScheduler

logger = logging.getLogger(__name__)


class DatabaseScheduler(StockDatabaseScheduler):
    def reserve(self, entry):
        """The entry advanced to this send, its row written now (Scheduler.tick sends it next)."""
        new_entry = super().reserve(entry)  # marks the row dirty for the next sync
        try:
            new_entry.save()
        except (DatabaseError, InterfaceError):
            logger.warning("Could not record the send of periodic job %s before sending it; "
                           "recorded at the next sync", new_entry.name, exc_info=True)
        else:
            self._dirty.discard(new_entry.name)
        return new_entry
