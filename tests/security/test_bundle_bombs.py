"""Bundle bombs against the real upload route: each is small on disk and built
here, and is refused early, with the worker's memory and time bounded (loosely: tens of MB, a
few seconds). Secrets files on import (item 8), the per-user upload throttle and draft quota."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import time
import tracemalloc
import zlib
from collections.abc import Iterable, Iterator

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.agents.files.bundles import MANIFEST, bundle
from tests.support import client_for

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
MEMORY_BOUND = 40 * MB   # the 256 MB header of the issue grew a worker by 495 MB
SECONDS_BOUND = 5.0      # CPU seconds; the entry flood of the issue held a worker 13.5 s


@pytest.fixture(autouse=True)
def drafts_dir(settings, tmp_path):
    settings.MIGRATION_DRAFTS_DIR = str(tmp_path / "drafts")


def gz(chunks: Iterable[bytes]) -> bytes:
    """One gzip stream of `chunks`, compressed as they come (the uncompressed whole is never held)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = bytearray()
    for chunk in chunks:
        out += compressor.compress(chunk)
    return bytes(out + compressor.flush())


def zeros(size: int) -> Iterator[bytes]:
    block = b"\0" * MB
    while size > 0:
        yield block[:min(size, MB)]
        size -= MB


def header(name: str, kind: bytes, size: int, fmt=tarfile.GNU_FORMAT) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode = kind, size, 0o644
    return info.tobuf(format=fmt)


def manifest_entry() -> bytes:
    body = json.dumps(MANIFEST).encode()
    return header("manifest.json", tarfile.REGTYPE, len(body)) + body + b"\0" * (-len(body) % 512)


def pax_huge_header() -> bytes:
    """One PAX extended header declaring 256 MB (of zeros): the issue's 255 KB upload."""
    return gz([manifest_entry(), header("././@PaxHeader", tarfile.XHDTYPE, 256 * MB, tarfile.USTAR_FORMAT),
               *zeros(256 * MB)])


def gnu_long_name() -> bytes:
    return gz([manifest_entry(), header("././@LongLink", tarfile.GNUTYPE_LONGNAME, 256 * MB), *zeros(256 * MB)])


def gnu_sparse_file() -> bytes:
    return gz([manifest_entry(), header("state/sparse", tarfile.GNUTYPE_SPARSE, 0), b"\0" * 1024])


def pax_sparse_file() -> bytes:
    records = _pax_records({"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": str(10**12)})
    return gz([manifest_entry(), header("././@PaxHeader", tarfile.XHDTYPE, len(records), tarfile.USTAR_FORMAT),
               records + b"\0" * (-len(records) % 512), header("state/sparse", tarfile.REGTYPE, 0), b"\0" * 1024])


def _pax_records(fields: dict[str, str]) -> bytes:
    out = b""
    for key, value in fields.items():
        body = f" {key}={value}\n".encode()
        length = len(body) + 1
        while len(str(length)) + len(body) != length:
            length += 1
        out += str(length).encode() + body
    return out


def entry_flood(count: int = 200_000) -> bytes:
    """The issue's flood: identical empty entries, a few hundred KB compressed."""
    one = header("state/a", tarfile.REGTYPE, 0)
    return gz([manifest_entry(), *(one * 1000 for _ in range(count // 1000)), b"\0" * 1024])


def ratio_bomb() -> bytes:
    """A state file of 1 GB of zeros: about 1 MB of gzip, under the 2 GB unpacked cap."""
    size = 1024 * MB
    return gz([manifest_entry(), header("state/zeros.bin", tarfile.REGTYPE, size), *zeros(size), b"\0" * 1024])


def nested_gzip() -> bytes:
    """A valid bundle gzipped once more: no tar inside the first gzip."""
    return gzip.compress(bundle(), mtime=0)


def gzip_bomb_as_a_file() -> bytes:
    """A state file that is itself a gzip of 1 GB of zeros: kept as it is, never unpacked."""
    inner = gz(zeros(1024 * MB))
    return bundle(state={"state/archive.gz": inner})


def upload(client, data: bytes):
    return client.post("/api/agent-migrations", {"bundle": SimpleUploadedFile("agent.tar.gz", data)},
                       format="multipart")


def measured_upload(client, data: bytes):
    """The answer, the peak of Python's allocations during it (bytes) and the CPU it took (s): the
    work the upload costs the server, whatever else the machine is doing (a wall-clock figure of
    a loaded CI machine measured its neighbours too)."""
    tracemalloc.start()
    started = time.process_time()
    try:
        response = upload(client, data)
        elapsed = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return response, peak, elapsed


BOMBS = [
    ("pax-huge-header", pax_huge_header, 413, "bundle_too_large", "MIGRATION_BUNDLE_MAX_HEADER_BYTES"),
    ("gnu-long-name", gnu_long_name, 413, "bundle_too_large", "MIGRATION_BUNDLE_MAX_HEADER_BYTES"),
    ("gnu-sparse", gnu_sparse_file, 400, "invalid_bundle", "sparse"),
    ("pax-sparse", pax_sparse_file, 400, "invalid_bundle", "sparse"),
    ("entry-flood", entry_flood, 413, "bundle_too_large", "MIGRATION_BUNDLE_MAX_ENTRIES"),
    ("ratio-bomb", ratio_bomb, 413, "bundle_too_large", "MIGRATION_BUNDLE_MAX_RATIO"),
    ("nested-gzip", nested_gzip, 400, "invalid_bundle", "not a readable"),
]


@pytest.mark.parametrize("case,build,status,code,named", BOMBS, ids=[b[0] for b in BOMBS])
def test_a_bundle_bomb_is_refused_early_in_bounded_memory_and_time(tenancy, case, build, status, code, named):
    data = build()
    assert len(data) < 2 * MB, case  # small on disk, as an attacker's upload is

    response, peak, elapsed = measured_upload(client_for(tenancy.viewer), data)

    assert (response.status_code, response.json()["code"]) == (status, code), response.content
    assert named in response.json()["error"]
    assert peak < MEMORY_BOUND, f"{case}: peak {peak / MB:.1f} MB"
    assert elapsed < SECONDS_BOUND, f"{case}: {elapsed:.1f} s"


def test_a_gzip_bomb_kept_as_a_state_file_is_not_unpacked(tenancy):
    response, peak, elapsed = measured_upload(client_for(tenancy.viewer), gzip_bomb_as_a_file())

    assert response.status_code == 201, response.content
    assert peak < MEMORY_BOUND and elapsed < SECONDS_BOUND


def test_a_normal_bundle_with_a_long_name_and_many_files_still_uploads(tenancy):
    state = {f"state/notes/{i}.md": b"note %d\n" % i for i in range(500)}
    state["state/" + "deep/" * 60 + "file.md"] = b"long path"  # a PAX path record, under 64 KB
    data = io.BytesIO()
    with gzip.GzipFile(fileobj=data, mode="wb", mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive:
        body = json.dumps(MANIFEST).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        archive.addfile(info, io.BytesIO(body))
        for name, content in state.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))

    response = upload(client_for(tenancy.viewer), data.getvalue())

    assert response.status_code == 201, response.content


# -- item 8: what export leaves out, import refuses ---------------------------------------------


@pytest.mark.parametrize("path", ["state/openclaw.json", "state/.env", "state/exec-approvals.json",
                                  "state/identity/device.json", "state/home/.git-credentials"])
def test_a_secrets_file_export_strips_is_refused_on_import_naming_it(tenancy, path):
    planted = json.dumps({"gateway": {"auth": {"mode": "none"}}}).encode()

    response = upload(client_for(tenancy.viewer), bundle(state={path: planted}))

    assert (response.status_code, response.json()["code"]) == (400, "invalid_bundle"), response.content
    assert path in response.json()["error"]


# -- throttle and quota per user ------------------------------------------------------------------


def test_uploads_are_throttled_per_user(tenancy, settings):
    settings.MIGRATION_UPLOAD_RATE_PER_USER = "2/1h"
    settings.MIGRATION_DRAFTS_MAX_PER_USER = 10
    client = client_for(tenancy.editor)

    answers = [upload(client, bundle()).status_code for _ in range(3)]

    assert answers == [201, 201, 429]
    assert upload(client_for(tenancy.viewer), bundle()).status_code == 201  # another user's own budget


def test_a_user_holds_at_most_the_drafts_count_cap(tenancy, settings):
    settings.MIGRATION_DRAFTS_MAX_PER_USER = 2
    client = client_for(tenancy.editor)

    answers = [upload(client, bundle()) for _ in range(3)]

    assert [a.status_code for a in answers] == [201, 201, 409]
    assert answers[2].json()["code"] == "draft_quota_exceeded"
    assert "MIGRATION_DRAFTS_MAX_PER_USER" in answers[2].json()["error"]


def test_a_user_holds_at_most_the_drafts_bytes_cap(tenancy, settings):
    data = bundle(state={"state/blob": bytes(range(256)) * 64})
    settings.MIGRATION_DRAFTS_MAX_BYTES_PER_USER = len(data) + 10
    client = client_for(tenancy.editor)

    answers = [upload(client, data) for _ in range(2)]

    assert [a.status_code for a in answers] == [201, 409]
    assert "MIGRATION_DRAFTS_MAX_BYTES_PER_USER" in answers[1].json()["error"]
