"""Data migrations tested on the real schema with Django's migration executor: the database
taken back to a migration, then forward again for the tests after it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` ([(app, migration)]) and answer the apps as they were there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def at_the_latest_state_afterwards():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
