"""Backup throughput: a 100 MB agent state to the loopback S3 server (moto in server mode,
tests/infra/s3.py) through the storage the backup job uses (backups.storage: boto3, multipart
above 64 MB in 16 MB parts, four at a time), beside a folder destination and the read back a
restore does.

The state is synthetic, not a runtime's: 100 files of 1 MB of random bytes (incompressible, so
the bundle is as large as the state) archived as the engine archives /state, then made into the
bundle by the export's own writer (agents.files.bundle.bundle_write). Starting a runtime and
filling its volume would add the engine's archive time, which the export bench territory
already covers, and take a runtime's memory on a 2-core machine.
"""

from __future__ import annotations

import os
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from agents.files.bundle import bundle_write
from backups.storage import FolderStorage, storage_from_url
from bench import report
from tests.infra.s3 import S3Server, free_port

MB = 1024 * 1024
FILES, FILE_MB = 100, 1
ROUNDS = 3
MANIFEST = {"format": "fleet-agent-bundle", "version": 1, "name": "bench", "runtime_family": "openclaw",
            "sandbox_profile": None, "resources": {"vcpu": 1.0, "ram_mb": 2048, "disk_gb": 5}, "budgets": []}


def _state_archive(folder: Path) -> Path:
    state = folder / "state"
    (state / "memory").mkdir(parents=True)
    for i in range(FILES):
        (state / "memory" / f"{i:03}.bin").write_bytes(os.urandom(FILE_MB * MB))
    archive = folder / "state.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(state, arcname="state")
    return archive


def _chunks(path: Path):
    with open(path, "rb") as source:
        while chunk := source.read(MB):
            yield chunk


def _rate(size: int, seconds: float) -> float:
    return size / MB / seconds


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="fleet-bench-backups-") as work:
        folder = Path(work)
        archive = _state_archive(folder)
        bundle = folder / "bundle.tar.gz"
        started = time.perf_counter()
        with open(bundle, "wb") as out:
            bundle_write(MANIFEST, _chunks(archive), out)
        built = time.perf_counter() - started
        size = bundle.stat().st_size
        report("bundle (export writer, gzip -6)", state_mb=float(FILES * FILE_MB), bundle_mb=size / MB,
               seconds=built, mb_per_s=_rate(size, built))

        server = S3Server(port=free_port()).start()
        try:
            server.create_bucket()
            s3 = storage_from_url(server.storage_url("bench"))
            puts, gets = [], []
            for round_ in range(ROUNDS):
                with open(bundle, "rb") as source:
                    started = time.perf_counter()
                    s3.put(f"agent/{round_}.tar.gz", source)
                    puts.append(time.perf_counter() - started)
                with open(folder / "fetched", "wb") as into:
                    started = time.perf_counter()
                    s3.fetch(f"agent/{round_}.tar.gz", into)
                    gets.append(time.perf_counter() - started)
            best, median = min(puts), statistics.median(puts)
            report("S3 put (loopback moto, multipart)", bundle_mb=size / MB, rounds=ROUNDS, median_s=median,
                   mb_per_s=_rate(size, median), best_mb_per_s=_rate(size, best))
            report("S3 get (restore's read)", median_s=statistics.median(gets),
                   mb_per_s=_rate(size, statistics.median(gets)))
        finally:
            server.stop()

        target = FolderStorage(folder / "destination")
        times = []
        for round_ in range(ROUNDS):
            with open(bundle, "rb") as source:
                started = time.perf_counter()
                target.put(f"agent/{round_}.tar.gz", source)
                times.append(time.perf_counter() - started)
        report("folder put (temp name, fsync, rename)", median_s=statistics.median(times),
               mb_per_s=_rate(size, statistics.median(times)))
