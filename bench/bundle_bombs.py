"""Migration bundle validation: peak memory and time of `bundle_validate` on each bomb of
tests/security/test_bundle_bombs.py, and on a normal bundle of 2,000 files (about 40 MB unpacked).

Time is measured without tracemalloc (it slows allocation-heavy code), then the peak of Python's
allocations in a second run with it. Before the bounded walk, the PAX header bomb peaked at its
declared 256 MB and the entry flood took 13.5 s.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import time
import tracemalloc

from agents.files.bundle import bundle_validate
from bench import report
from fleet.errors import FleetError
from tests.agents.files.bundles import MANIFEST
from tests.security.test_bundle_bombs import BOMBS, gzip_bomb_as_a_file

MB = 1024 * 1024


def normal_bundle() -> bytes:
    """2,000 files: text that compresses like notes and logs, and some incompressible bytes."""
    buffer = io.BytesIO()
    text = b"".join(b"line %d of an agent's memory, with some words that repeat\n" % i for i in range(400))
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=6) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive:
        body = json.dumps(MANIFEST).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        archive.addfile(info, io.BytesIO(body))
        for i in range(2000):
            data = os.urandom(4096) if i % 4 == 0 else text
            info = tarfile.TarInfo(f"state/memory/{i // 100}/{i}.md")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _validate(data: bytes) -> str:
    try:
        bundle_validate(io.BytesIO(data))
    except FleetError as exc:
        return exc.code
    return "ok"


def _figures(title: str, data: bytes) -> None:
    started = time.perf_counter()
    outcome = _validate(data)
    elapsed = time.perf_counter() - started
    tracemalloc.start()
    try:
        _validate(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    report(title, outcome=outcome, upload_kb=len(data) / 1024, seconds=elapsed, peak_mb=peak / MB)


def main() -> None:
    for case, build, *_ in BOMBS:
        _figures(case, build())
    _figures("gzip-bomb-as-a-state-file", gzip_bomb_as_a_file())
    _figures("normal-2000-files", normal_bundle())
