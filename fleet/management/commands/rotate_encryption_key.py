"""Re-encrypt every EncryptedTextField of every installed model under the primary key.

Put the new key first in FLEET_ENCRYPTION_KEYS (keep the old ones after it), deploy, run
this command, then drop the old keys. Rows are walked in primary-key batches, each batch
in its own transaction; rows already under the primary key are skipped, so the command
is idempotent and may simply be run again after an interruption. Each row is rewritten
only if its stored token is still the one read, so a concurrent edit is never undone.
Values that cannot be decrypted are left untouched, counted, and make the exit status 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from django.db import transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from fleet.commands import RecordedCommand
from fleet.crypto import DecryptionError, decrypt, encrypted_fields, key_ring, needs_rotation, new_key, parse_key_ring

RAW = "_fleet_raw_token"


@dataclass
class FieldReport:
    label: str
    scanned: int = 0
    rotated: int = 0
    current: int = 0
    failed: int = 0
    changed_meanwhile: int = 0


class Command(RecordedCommand):
    one_transaction = False  # one transaction per batch of rows
    help = "Re-encrypt every encrypted model field under the primary key of FLEET_ENCRYPTION_KEYS."
    # The system checks (agents.W001: how agents reach the web server) are migrate's and check's.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500, help="Rows per transaction (default 500).")
        parser.add_argument("--dry-run", action="store_true", help="Count what would change; write nothing.")
        parser.add_argument(
            "--generate-key", metavar="KID",
            help="Only print a new `KID:key` entry to put first in FLEET_ENCRYPTION_KEYS; change nothing.",
        )

    def handle(self, *args, batch_size: int, dry_run: bool, generate_key: str | None = None, **options):
        if generate_key is not None:
            entry = f"{generate_key}:{new_key()}"
            try:
                parse_key_ring(entry)  # the key id follows the ring's own rule
            except ImproperlyConfigured as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(entry)
            return
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        primary = key_ring().primary_kid
        self.stdout.write(f"Primary key id: {primary}{' (dry run)' if dry_run else ''}")
        reports = [
            self._rotate_field(model, field, batch_size=batch_size, dry_run=dry_run)
            for model, field in encrypted_fields()
        ]
        for r in reports:
            self.stdout.write(
                f"{r.label}: scanned {r.scanned}, {'to rotate' if dry_run else 'rotated'} {r.rotated}, "
                f"already current {r.current}, undecryptable {r.failed}, changed meanwhile {r.changed_meanwhile}"
            )
        failed = sum(r.failed for r in reports)
        if failed:
            raise CommandError(f"{failed} value(s) could not be decrypted with any configured key; left unchanged.")
        self.stdout.write(self.style.SUCCESS(f"Done: {sum(r.rotated for r in reports)} value(s) re-encrypted."))

    def _rotate_field(self, model, field, *, batch_size: int, dry_run: bool) -> FieldReport:
        report = FieldReport(label=f"{model._meta.label}.{field.name}")
        manager = model._base_manager
        # Cast reads the stored token itself, past the field's decrypting converter.
        raw_rows = manager.annotate(**{RAW: Cast(field.attname, TextField())}).filter(
            **{f"{field.attname}__isnull": False}
        )
        last_pk = None
        while True:
            page = raw_rows.order_by("pk")
            if last_pk is not None:
                page = page.filter(pk__gt=last_pk)
            batch = list(page.values_list("pk", RAW)[:batch_size])
            if not batch:
                return report
            last_pk = batch[-1][0]
            with transaction.atomic(using=manager.db):
                for pk, token in batch:
                    self._rotate_row(raw_rows, field, pk, token, report, dry_run=dry_run)

    def _rotate_row(self, raw_rows, field, pk, token: str, report: FieldReport, *, dry_run: bool) -> None:
        report.scanned += 1
        if not needs_rotation(token):
            report.current += 1
            return
        try:
            plaintext = decrypt(token)
        except DecryptionError as exc:
            report.failed += 1
            self.stderr.write(f"{report.label} pk={pk}: {exc}")
            return
        if dry_run:
            report.rotated += 1
            return
        # The field's get_prep_value encrypts the plaintext under the primary key.
        updated = raw_rows.filter(pk=pk, **{RAW: token}).update(**{field.attname: plaintext})
        if updated:
            report.rotated += 1
        else:
            report.changed_meanwhile += 1
