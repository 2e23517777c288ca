"""A bounded walk over an uploaded `.tar.gz`: its entries as the gzip stream inflates, in small
pieces, never a header or a file read whole (a 256 MB PAX header grew a worker by
half a GB; 200,000 empty entries held one for 13.5 s).

tarfile reads an extended header (PAX, GNU long name) whole before looking at it, and follows
whatever types and sparse maps it meets; so the headers are parsed here, one 512-byte block at
a time with tarfile's own block parser (names, prefixes, base-256 sizes, checksums), and every
limit is checked as the bytes come:
- an extended header's size (MIGRATION_BUNDLE_MAX_HEADER_BYTES) before its content is read,
- the count of headers (MIGRATION_BUNDLE_MAX_ENTRIES),
- the unpacked bytes (MIGRATION_STATE_MAX_BYTES), declared sizes before they are inflated,
- the ratio of unpacked to compressed bytes (MIGRATION_BUNDLE_MAX_RATIO) past the first
  MIGRATION_BUNDLE_RATIO_AFTER_BYTES, so a bundle of small zero-filled files still passes.
Only what Fleet writes is accepted: regular files, folders, PAX per-file headers and GNU long
names. Global PAX headers, sparse files (GNU or PAX), links and special files are refused, so
what the restore's tarfile reads later is exactly what was walked here.
"""

from __future__ import annotations

import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from django.conf import settings

from .errors import BundleInvalid, BundleTooLarge

BLOCK = tarfile.BLOCKSIZE
CHUNK = 64 * 1024
ZERO_BLOCK = b"\0" * BLOCK
PAX_TYPES = (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE)
LONG_NAME_TYPES = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE)


@dataclass(frozen=True)
class WalkLimits:
    header_bytes: int
    entries: int
    unpacked_bytes: int
    ratio: float
    ratio_after: int

    @classmethod
    def from_settings(cls) -> WalkLimits:
        return cls(header_bytes=settings.MIGRATION_BUNDLE_MAX_HEADER_BYTES,
                   entries=settings.MIGRATION_BUNDLE_MAX_ENTRIES,
                   unpacked_bytes=settings.MIGRATION_STATE_MAX_BYTES,
                   ratio=settings.MIGRATION_BUNDLE_MAX_RATIO,
                   ratio_after=settings.MIGRATION_BUNDLE_RATIO_AFTER_BYTES)


class _Inflater:
    """The upload's gzip stream inflated in pieces of at most CHUNK, counting bytes in and out."""

    def __init__(self, upload: BinaryIO, limits: WalkLimits):
        self._upload, self._limits = upload, limits
        self._inflate = zlib.decompressobj(31)  # gzip framing only: a bundle is one .tar.gz
        self._pending = b""  # compressed input not yet inflated
        self._buffer = bytearray()
        self.consumed = 0
        self.produced = 0

    def read(self, size: int) -> bytes:
        """Exactly `size` bytes (the caller bounds it), fewer only at the stream's end."""
        while len(self._buffer) < size and self._more():
            pass
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def skip(self, size: int) -> None:
        while size > 0:
            piece = self.read(min(size, CHUNK))
            if not piece:
                raise EOFError("The archive ends inside a file.")
            size -= len(piece)

    def _more(self) -> bool:
        if self._inflate.eof:
            return False
        if not self._pending:
            self._pending = self._upload.read(CHUNK)
            if not self._pending:
                raise EOFError("The gzip stream ends early.")
        before = len(self._pending)
        out = self._inflate.decompress(self._pending, CHUNK)
        self._pending = self._inflate.unconsumed_tail or b""
        self.consumed += before - len(self._pending)
        self.produced += len(out)
        self._buffer += out
        self._check()
        return True

    def _check(self) -> None:
        limits = self._limits
        if self.produced > limits.unpacked_bytes:
            raise BundleTooLarge(f"The bundle unpacks to more than {limits.unpacked_bytes} bytes "
                                 "(MIGRATION_STATE_MAX_BYTES).")
        if self.produced > limits.ratio_after and self.produced > limits.ratio * max(self.consumed, 1):
            raise BundleTooLarge(f"The bundle unpacks to more than {limits.ratio:g} times its compressed size "
                                 "(MIGRATION_BUNDLE_MAX_RATIO): a compression bomb.")


@dataclass(frozen=True)
class Entry:
    name: str
    type: bytes
    size: int

    @property
    def is_file(self) -> bool:
        return self.type in FILE_TYPES

    @property
    def is_dir(self) -> bool:
        return self.type == tarfile.DIRTYPE


class BundleWalk:
    """`for entry in walk.entries()`; `walk.content(entry)` reads the current file's bytes (the
    caller bounds its size first); what is not read is skipped in pieces."""

    def __init__(self, upload: BinaryIO, limits: WalkLimits | None = None):
        self._limits = limits or WalkLimits.from_settings()
        self._stream = _Inflater(upload, self._limits)
        self._unread = 0  # bytes of the current entry's content (and padding) not read yet

    def content(self, entry: Entry) -> bytes:
        data = self._stream.read(entry.size)
        if len(data) != entry.size:
            raise EOFError("The archive ends inside a file.")
        self._unread -= entry.size
        return data

    def entries(self) -> Iterator[Entry]:
        headers = 0
        declared = 0
        overrides: dict[str, str] = {}
        while True:
            self._stream.skip(self._unread)
            self._unread = 0
            block = self._stream.read(BLOCK)
            if not block or block == ZERO_BLOCK:
                return  # end of the archive (tarfile also takes one that stops between members)
            if len(block) < BLOCK:
                raise EOFError("The archive ends inside a header.")
            headers += 1
            if headers > self._limits.entries:
                raise BundleTooLarge(f"The bundle holds more than {self._limits.entries} entries "
                                     "(MIGRATION_BUNDLE_MAX_ENTRIES).")
            try:
                info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
            except tarfile.HeaderError as exc:
                raise BundleInvalid(f"The bundle holds a malformed tar header ({exc}).") from None
            if info.type in PAX_TYPES or info.type in LONG_NAME_TYPES:
                overrides.update(self._extended(info))
                continue
            if info.type == tarfile.XGLTYPE:
                raise BundleInvalid("The bundle holds a global PAX header, which Fleet never writes.")
            if info.type == tarfile.GNUTYPE_SPARSE:
                raise BundleInvalid(f"The bundle holds a sparse file: {info.name[:100]!r}.")
            entry = self._entry(info, overrides)
            overrides = {}
            if entry.is_file:
                declared += entry.size
                if declared > self._limits.unpacked_bytes:
                    raise BundleTooLarge(f"The bundle's files add up to more than {self._limits.unpacked_bytes} "
                                         "bytes (MIGRATION_STATE_MAX_BYTES).")
                # tarfile skips a regular file's blocks only; a folder's or link's size is ignored.
                self._unread = entry.size + (-entry.size % BLOCK)
            yield entry

    def _extended(self, info: tarfile.TarInfo) -> dict[str, str]:
        """The fields a PAX header or a GNU long name gives the next entry, its size bounded first."""
        limit = self._limits.header_bytes
        if info.size > limit:
            raise BundleTooLarge(f"The bundle holds an extended tar header of {info.size} bytes; at most {limit} "
                                 "are allowed (MIGRATION_BUNDLE_MAX_HEADER_BYTES).")
        data = self._stream.read(info.size)
        if len(data) != info.size:
            raise EOFError("The archive ends inside a header.")
        self._stream.skip(-info.size % BLOCK)
        if info.type == tarfile.GNUTYPE_LONGNAME:
            return {"path": tarfile.nts(data, "utf-8", "surrogateescape")}
        if info.type == tarfile.GNUTYPE_LONGLINK:
            return {"linkpath": tarfile.nts(data, "utf-8", "surrogateescape")}
        fields = _pax_records(data)
        if any(key.startswith("GNU.sparse") for key in fields):
            raise BundleInvalid("The bundle holds a sparse file (GNU.sparse PAX records).")
        return fields

    @staticmethod
    def _entry(info: tarfile.TarInfo, overrides: dict[str, str]) -> Entry:
        name = overrides.get("path", info.name)
        size = info.size
        if "size" in overrides:
            try:
                size = int(overrides["size"])
            except ValueError:
                raise BundleInvalid("The bundle holds a PAX size that is not a number.") from None
        if size < 0:
            raise BundleInvalid("The bundle holds a negative size.")
        if info.type == tarfile.DIRTYPE or (info.type == tarfile.AREGTYPE and name.endswith("/")):
            return Entry(name.rstrip("/"), tarfile.DIRTYPE, 0)
        return Entry(name, info.type, size)


def _pax_records(data: bytes) -> dict[str, str]:
    """`<length> <key>=<value>\\n` records, as tarfile reads them (UTF-8, undecodable bytes kept)."""
    fields: dict[str, str] = {}
    position = 0
    while position < len(data) and data[position:position + 1] != b"\0":
        space = data.find(b" ", position)
        try:
            length = int(data[position:space])
        except ValueError:
            raise BundleInvalid("The bundle holds a malformed PAX header.") from None
        record = data[space + 1:position + length]
        if length <= 0 or space < 0 or not record.endswith(b"\n") or b"=" not in record:
            raise BundleInvalid("The bundle holds a malformed PAX header.")
        key, _, value = record[:-1].partition(b"=")
        fields[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        position += length
    return fields
