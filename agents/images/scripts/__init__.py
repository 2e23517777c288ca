"""The shell scripts every runtime image starts from, and where they go in the image."""

from __future__ import annotations

from pathlib import Path

from agents.images.rootfs import Rootfs

HERE = Path(__file__).resolve().parent
ENTRYPOINT = "/usr/local/bin/fleet-entrypoint"
SUPERVISE = "/usr/local/lib/fleet/supervise.sh"  # the entrypoints source it from there


def install_entrypoint(rootfs: Rootfs, name: str) -> None:
    rootfs.copy(HERE / "supervise.sh", SUPERVISE, mode=0o644)
    rootfs.copy(HERE / name, ENTRYPOINT, mode=0o755)
