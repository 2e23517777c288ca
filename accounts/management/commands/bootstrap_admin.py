"""Create the first platform admin unless one exists (safe to run on every release)."""

from __future__ import annotations

import os

from django.core.management.base import CommandError

from accounts.services import email_is_valid, password_length_problem, user_create_first_admin
from fleet.commands import RecordedCommand
from fleet.errors import Conflict


class Command(RecordedCommand):
    help = (
        "Create the first platform admin if none exists; otherwise do nothing and say so. "
        "Email and password come from --email/--password or FLEET_ADMIN_EMAIL/FLEET_ADMIN_PASSWORD."
    )
    # The system checks (agents.W001: how agents reach the web server) are migrate's and check's.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--email", default=os.environ.get("FLEET_ADMIN_EMAIL", ""))
        parser.add_argument(
            "--password",
            default=os.environ.get("FLEET_ADMIN_PASSWORD", ""),
            help="Prefer FLEET_ADMIN_PASSWORD: command-line arguments are visible to other users.",
        )

    def handle(self, *args, email: str, password: str, **options):
        email = (email or "").strip()
        if not email or not password:
            raise CommandError("Give --email and --password (or FLEET_ADMIN_EMAIL and FLEET_ADMIN_PASSWORD).")
        if not email_is_valid(email):
            raise CommandError(f"{email!r} is not a valid email address of at most 255 characters.")
        problem = password_length_problem(password)
        if problem:
            raise CommandError(problem)
        try:
            admin = user_create_first_admin(email=email, password=password)
        except Conflict as exc:
            raise CommandError(f"{exc.message} Promote that user in the admin console instead.") from exc
        if admin is None:
            self.stdout.write("A platform admin already exists; nothing to do.")
            return
        self.stdout.write(self.style.SUCCESS(f"Created the platform admin {admin.email}."))
