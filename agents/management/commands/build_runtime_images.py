"""Build the runtime images (fleet/openclaw, fleet/hermes) on a Docker engine without a registry.

Each image is a root filesystem staged from the npm registry or PyPI and this machine's
libraries, loaded with `docker import` (agents/images). A tag the engine already has from the
same recipe is skipped, so running this on every release or CI run costs seconds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.images.build import BuildError, build_image, engine_for_build
from agents.images.catalog import RECIPES


def default_cache_dir() -> Path:
    # Under the system temp folder: shared by every checkout on the machine, and writable by
    # whoever runs the build. CI passes --cache-dir /var/cache/fleet-runtimes to keep it.
    return Path(tempfile.gettempdir()) / "fleet-runtimes-cache"


class Command(BaseCommand):
    help = (
        "Build fleet/openclaw and fleet/hermes on the Docker engine (DOCKER_HOST or --docker-host). "
        "An image already built from the same recipe is skipped unless --force. Needs npm (OpenClaw) "
        "and Debian's python3.11 with python3.11-venv (Hermes) on this machine."
    )
    # The system checks (agents.W001: how agents reach the web server) are migrate's and check's.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("families", nargs="*", metavar="FAMILY",
                            help=f"which images: {', '.join(RECIPES)} (default: all)")
        parser.add_argument("--docker-host", default="", help="engine URL (default: the DOCKER_HOST setting)")
        parser.add_argument("--cache-dir", type=Path, default=None,
                            help=f"npm and pip download cache (default: {default_cache_dir()})")
        parser.add_argument("--force", action="store_true", help="rebuild even when the tag is up to date")

    def handle(self, *args, families, docker_host, cache_dir, force, **options):
        unknown = sorted(set(families) - set(RECIPES))
        if unknown:
            raise CommandError(f"No recipe for {', '.join(unknown)}; known: {', '.join(RECIPES)}.")
        host = docker_host or settings.DOCKER_HOST
        cache_dir = (cache_dir or default_cache_dir()).resolve()

        def say(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        try:
            client = engine_for_build(host)
            say(f"engine {host}, cache {cache_dir}")
            for family in families or RECIPES:
                build_image(client, RECIPES[family], cache_dir=cache_dir, say=say, force=force)
        except BuildError as exc:
            raise CommandError(str(exc)) from exc
        for family, image in (("openclaw", settings.AGENT_IMAGE_OPENCLAW), ("hermes", settings.AGENT_IMAGE_HERMES)):
            if image != RECIPES[family].tag:
                # Built anyway: the setting may name another registry's image on purpose.
                self.stderr.write(f"note: AGENT_IMAGE_{family.upper()} is {image}, not {RECIPES[family].tag}")
