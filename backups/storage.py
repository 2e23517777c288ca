"""Where backups are stored: a folder of the server's, or an S3-compatible bucket (boto3).

Both write an object whole or not at all, so a backup is never listed as completed over a
half-written copy: a folder writes to a temporary name beside the target and renames it (one
atomic step on one filesystem); S3 makes an object visible only when its PUT or its multipart
upload completes, and boto3's transfer manager aborts the multipart upload when a part fails.

Storage URLs (BACKUP_STORAGE_URL, and each Backup's recorded destination):
    file:///var/lib/fleet/backups
    s3://ACCESS:SECRET@host:port/bucket/prefix?region=eu-west-1&https=false
"""

from __future__ import annotations

import os
import uuid
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import parse_qs, quote, unquote, urlsplit

from fleet.netsafety import UnsafeTarget, check_host

COPY_CHUNK = 1024 * 1024
# Bundles above the threshold go up in parts (S3's smallest part is 5 MB), four at a time.
MULTIPART_THRESHOLD = 64 * 1024 * 1024
MULTIPART_CHUNK = 16 * 1024 * 1024


class StorageError(Exception):
    """The destination failed or refused; the message names no credential (scrubbed by the
    caller with `Storage.secrets` too, since a library's message may quote anything)."""


class DestinationRefused(StorageError):
    """The outbound policy refuses the destination's host: trying again will not help."""


class StorageUrlInvalid(ValueError):
    """A storage URL that cannot be used (the operator's setting, or a recorded one)."""


class Storage(Protocol):
    secrets: tuple[str, ...]

    def put(self, key: str, source: BinaryIO) -> int: ...  # bytes stored
    def fetch(self, key: str, into: BinaryIO) -> None: ...
    def delete(self, key: str) -> None: ...  # a missing object is no error
    def keys(self, prefix: str) -> list[str]: ...


@dataclass(frozen=True)
class FolderStorage:
    root: Path
    secrets: tuple[str, ...] = ()

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise StorageError("The object key leaves the backup folder.")
        return path

    def put(self, key: str, source: BinaryIO) -> int:
        target = self._path(key)
        partial = target.with_name(f".{target.name}.partial-{uuid.uuid4().hex}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(partial, "xb") as out:
                size = _copy(source, out)
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, target)  # the copy appears whole, or not at all
            _fsync_folder(target.parent)
        except OSError as exc:
            with suppress(OSError):  # the folder itself may be what failed (not a folder, gone)
                partial.unlink(missing_ok=True)
            raise StorageError(f"The backup folder could not be written: {exc.strerror or exc}.") from exc
        return size

    def fetch(self, key: str, into: BinaryIO) -> None:
        try:
            with open(self._path(key), "rb") as source:
                _copy(source, into)
        except FileNotFoundError:
            raise StorageError("The backup's file is no longer in the backup folder.") from None
        except OSError as exc:
            raise StorageError(f"The backup folder could not be read: {exc.strerror or exc}.") from exc

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            raise StorageError(f"The backup's file could not be deleted: {exc.strerror or exc}.") from exc

    def keys(self, prefix: str) -> list[str]:
        folder = self._path(prefix)
        if not folder.is_dir():
            return []
        return sorted(str(path.relative_to(self.root.resolve())) for path in folder.rglob("*")
                      if path.is_file() and not path.name.startswith("."))


@dataclass(frozen=True)
class S3Location:
    """An S3-compatible bucket: its endpoint (`http(s)://host:port`), bucket, key prefix, region
    and credentials."""

    endpoint_url: str
    bucket: str
    prefix: str
    access_key_id: str
    secret_access_key: str
    region: str = ""

    def url(self) -> str:
        """Its storage URL, credentials included (kept encrypted on each Backup)."""
        parts = urlsplit(self.endpoint_url)
        query = f"https={'true' if parts.scheme == 'https' else 'false'}"
        if self.region:
            query += f"&region={quote(self.region, safe='')}"
        path = "/".join(part for part in (self.bucket, self.prefix) if part)
        credentials = f"{quote(self.access_key_id, safe='')}:{quote(self.secret_access_key, safe='')}"
        return f"s3://{credentials}@{parts.netloc}/{path}?{query}"


class S3Storage:
    """A bucket through boto3; timeouts and one retry of the SDK's own, the task's retries above."""

    def __init__(self, location: S3Location, *, check_outbound: bool = False) -> None:
        self.location = location
        self.secrets = tuple(s for s in (location.access_key_id, location.secret_access_key) if s)
        self._check_outbound = check_outbound
        self._client = None

    def _s3(self):
        if self._client is None:
            if self._check_outbound:  # a policy's endpoint: checked again at every use (DNS may change)
                parts = urlsplit(self.location.endpoint_url)
                try:
                    check_host(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
                except UnsafeTarget as exc:
                    refusal = f"The backup destination is refused by the outbound policy: {exc}"
                    raise DestinationRefused(refusal) from None
            import boto3  # ~1 s to import: only processes that store a backup pay for it
            from botocore.config import Config

            self._client = boto3.client(
                "s3", endpoint_url=self.location.endpoint_url, region_name=self.location.region or "us-east-1",
                aws_access_key_id=self.location.access_key_id,
                aws_secret_access_key=self.location.secret_access_key,
                config=Config(connect_timeout=5, read_timeout=60, retries={"max_attempts": 2, "mode": "standard"},
                              s3={"addressing_style": "path"}),
            )
        return self._client

    def _key(self, key: str) -> str:
        return f"{self.location.prefix.strip('/')}/{key}" if self.location.prefix.strip("/") else key

    def put(self, key: str, source: BinaryIO) -> int:
        from boto3.s3.transfer import TransferConfig

        start = source.tell()
        size = source.seek(0, os.SEEK_END) - start
        source.seek(start)
        config = TransferConfig(multipart_threshold=MULTIPART_THRESHOLD, multipart_chunksize=MULTIPART_CHUNK,
                                max_concurrency=4)
        with _s3_errors("stored"):
            # A multipart upload that fails is aborted by the transfer manager: no parts left behind.
            self._s3().upload_fileobj(source, self.location.bucket, self._key(key), Config=config)
        return size

    def fetch(self, key: str, into: BinaryIO) -> None:
        with _s3_errors("read"):
            self._s3().download_fileobj(self.location.bucket, self._key(key), into)

    def delete(self, key: str) -> None:
        with _s3_errors("deleted"):
            self._s3().delete_object(Bucket=self.location.bucket, Key=self._key(key))

    def keys(self, prefix: str) -> list[str]:
        found: list[str] = []
        strip = len(self._key(""))
        with _s3_errors("listed"):
            pages = self._s3().get_paginator("list_objects_v2").paginate(Bucket=self.location.bucket,
                                                                         Prefix=self._key(prefix))
            for page in pages:
                found.extend(item["Key"][strip:] for item in page.get("Contents", ()))
        return sorted(found)


class _s3_errors:  # noqa: N801 - used as a `with` statement
    """boto3's failures as StorageError: its own message (endpoint, operation, error code)."""

    def __init__(self, doing: str) -> None:
        self.doing = doing

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, StorageError):  # DestinationRefused among them
            return False
        from boto3.exceptions import Boto3Error
        from botocore.exceptions import BotoCoreError, ClientError

        if isinstance(exc, (BotoCoreError, ClientError, Boto3Error, OSError)):
            raise StorageError(f"The backup could not be {self.doing} at the S3 destination: {exc}") from exc
        return False


def storage_from_url(url: str, *, check_outbound: bool = False) -> Storage:
    """The storage a URL names (module docstring); StorageUrlInvalid when it names none."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if not parts.path.startswith("/"):
            raise StorageUrlInvalid("A file:// backup URL needs an absolute folder.")
        return FolderStorage(Path(unquote(parts.path)))
    if parts.scheme == "s3":
        return S3Storage(s3_location_from_url(url), check_outbound=check_outbound)
    raise StorageUrlInvalid("A backup storage URL starts with file:// or s3://.")


def s3_location_from_url(url: str) -> S3Location:
    parts = urlsplit(url)
    query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
    bucket, _, prefix = parts.path.lstrip("/").partition("/")
    host = parts.netloc.rpartition("@")[2]
    if not host or not bucket:
        raise StorageUrlInvalid("An s3:// backup URL names a host and a bucket: s3://ACCESS:SECRET@host/bucket.")
    scheme = "http" if query.get("https", "true").lower() in ("false", "0", "no") else "https"
    return S3Location(endpoint_url=f"{scheme}://{host}", bucket=bucket, prefix=prefix.strip("/"),
                      access_key_id=unquote(parts.username or ""), secret_access_key=unquote(parts.password or ""),
                      region=query.get("region", ""))


def _copy(source: BinaryIO, out: BinaryIO) -> int:
    size = 0
    while chunk := source.read(COPY_CHUNK):
        out.write(chunk)
        size += len(chunk)
    return size


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
