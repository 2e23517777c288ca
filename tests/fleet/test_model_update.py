"""fleet.services.model_update: the one way a service updates some fields of a row."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from fleet.errors import ValidationFailed
from fleet.services import model_update
from tests.factories.workspaces import WorkspaceFactory

pytestmark = pytest.mark.django_db


def test_it_saves_only_the_fields_that_changed():
    workspace = WorkspaceFactory(name="before")

    with CaptureQueriesContext(connection) as queries:
        updated, changed = model_update(instance=workspace, fields=["name"], data={"name": "after", "other": 1})

    assert changed and updated.name == "after"
    (update,) = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
    assert '"name"' in update and '"owner_id"' not in update
    workspace.refresh_from_db()
    assert workspace.name == "after"


def test_unchanged_or_absent_fields_write_nothing():
    workspace = WorkspaceFactory(name="same")

    with CaptureQueriesContext(connection) as queries:
        _, changed = model_update(instance=workspace, fields=["name"], data={"name": "same"})
        _, absent = model_update(instance=workspace, fields=["name"], data={})

    assert (changed, absent) == (False, False)
    assert queries.captured_queries == []


def test_an_invalid_value_is_a_validation_error_naming_the_field():
    workspace = WorkspaceFactory(name="ok")

    with pytest.raises(ValidationFailed) as raised:
        model_update(instance=workspace, fields=["name"], data={"name": "x" * 101})

    assert "name" in raised.value.fields
    workspace.refresh_from_db()
    assert workspace.name == "ok"
