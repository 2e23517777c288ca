from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from fleet import crypto

from .conftest import key_spec


def raw_tokens(model) -> dict:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT title, secret FROM {model._meta.db_table}")
        return dict(cursor.fetchall())


def rotate(*args) -> str:
    out = StringIO()
    call_command("rotate_encryption_key", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def notes_under_old_key(sealed_notes, settings):
    settings.FLEET_ENCRYPTION_KEYS = key_spec("old")
    for i in range(7):
        sealed_notes.objects.create(title=f"n{i}", secret=f"secret {i}")
    sealed_notes.objects.create(title="empty", secret=None)
    settings.FLEET_ENCRYPTION_KEYS = key_spec("new", "old")
    return sealed_notes


def test_it_reencrypts_every_value_under_the_primary_key(notes_under_old_key, settings):
    output = rotate("--batch-size", "3")

    assert "fleet_sealedapp.SealedNote.secret: scanned 7, rotated 7, already current 0" in output
    tokens = raw_tokens(notes_under_old_key)
    assert tokens.pop("empty") is None
    assert all(token.startswith("v1:new:") for token in tokens.values())
    settings.FLEET_ENCRYPTION_KEYS = key_spec("new")  # the old key can now go
    assert {n.title: n.secret for n in notes_under_old_key.objects.all()} == {
        **{f"n{i}": f"secret {i}" for i in range(7)},
        "empty": None,
    }


def test_running_it_again_changes_nothing(notes_under_old_key):
    rotate()
    before = raw_tokens(notes_under_old_key)

    output = rotate()

    assert "scanned 7, rotated 0, already current 7" in output
    assert raw_tokens(notes_under_old_key) == before


def test_it_finishes_the_job_after_an_interrupted_run(notes_under_old_key):
    # An interrupted run leaves some rows under the new key and some under the old.
    first = notes_under_old_key.objects.order_by("pk").first()
    first.secret = "secret 0"
    first.save()

    output = rotate("--batch-size", "2")

    assert "scanned 7, rotated 6, already current 1" in output
    assert all(t is None or t.startswith("v1:new:") for t in raw_tokens(notes_under_old_key).values())


def test_a_dry_run_counts_and_writes_nothing(notes_under_old_key):
    before = raw_tokens(notes_under_old_key)

    output = rotate("--dry-run")

    assert "scanned 7, to rotate 7" in output
    assert raw_tokens(notes_under_old_key) == before


def test_it_leaves_undecryptable_values_alone_and_fails_at_the_end(notes_under_old_key):
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {notes_under_old_key._meta.db_table} SET secret = %s WHERE title = 'n3'",
            ["v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
        )

    with pytest.raises(CommandError, match="1 value"):
        rotate()

    tokens = raw_tokens(notes_under_old_key)
    assert tokens["n3"] == "v1:gone:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    assert sum(1 for t in tokens.values() if t and t.startswith("v1:new:")) == 6


def test_it_never_overwrites_a_value_changed_since_it_was_read(notes_under_old_key):
    # The conditional update is what protects a concurrent edit: simulate the race on one row.
    from django.db.models import TextField
    from django.db.models.functions import Cast

    from fleet.management.commands.rotate_encryption_key import RAW, Command, FieldReport

    model = notes_under_old_key
    note = model.objects.get(title="n1")
    read_token = raw_tokens(model)["n1"]
    note.secret = "edited meanwhile"
    note.save()

    field = model._meta.get_field("secret")
    rows = model._base_manager.annotate(**{RAW: Cast("secret", TextField())})
    report = FieldReport(label="x")
    Command()._rotate_row(rows, field, note.pk, read_token, report, dry_run=False)

    assert report.changed_meanwhile == 1
    assert model.objects.get(pk=note.pk).secret == "edited meanwhile"


def test_it_refuses_a_batch_size_below_one(db):
    with pytest.raises(CommandError):
        rotate("--batch-size", "0")



def test_it_prints_a_new_key_entry_the_ring_accepts_and_changes_nothing(notes_under_old_key):
    out = StringIO()
    call_command("rotate_encryption_key", "--generate-key", "k2026", stdout=out)

    entry = out.getvalue().strip()
    assert entry.startswith("k2026:")
    assert crypto.parse_key_ring(entry).primary_kid == "k2026"


def test_a_generated_key_needs_a_valid_key_id():
    with pytest.raises(CommandError, match="kid"):
        call_command("rotate_encryption_key", "--generate-key", "bad id!")
