"""Bundles for the migration tests: a valid export, and tampered ones."""

from __future__ import annotations

import gzip
import io
import json
import tarfile

MANIFEST = {
    "format": "fleet-agent-bundle",
    "version": 1,
    "name": "migrated-agent",
    "runtime_family": "openclaw",
    "sandbox_profile": None,
    "resources": {"vcpu": 0.5, "ram_mb": 768, "disk_gb": 3},
    "budgets": [{"period": "daily", "limit_micros": 2_500_000, "soft_threshold_pct": 70.0}],
}


def member(name: str, data: bytes | None = b"x", *, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.size = len(data) if kind == tarfile.REGTYPE and data is not None else 0
    return info


def bundle(*, manifest: dict | bytes | None = None, entries: list[tuple[tarfile.TarInfo, bytes | None]] = (),
           state: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    # gzip's header would carry the time of the call: a fixed one makes the same bundle the same bytes.
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w") as archive:
        if manifest is not None or not entries:
            body = manifest if isinstance(manifest, bytes) else json.dumps(manifest or MANIFEST).encode()
            archive.addfile(member("manifest.json", body), io.BytesIO(body))
        archive.addfile(member("state", None, kind=tarfile.DIRTYPE))
        for name, data in (state if state is not None else {"state/memory.md": b"remember me"}).items():
            archive.addfile(member(name, data), io.BytesIO(data))
        for info, data in entries:
            archive.addfile(info, io.BytesIO(data) if data is not None and info.isfile() else None)
    return buffer.getvalue()
