"""A file object over a stream of byte chunks, for reading a tar as it arrives."""

from __future__ import annotations

import io
import tarfile

# What a reader keeps of the stream's end: enough for the end-of-archive marker (two zero blocks)
# and the padding of a tar writer that fills its last record (10,240 bytes).
TAIL_BYTES = tarfile.RECORDSIZE + 2 * tarfile.BLOCKSIZE


class ChunkReader(io.RawIOBase):
    """A file object over an iterator of byte chunks (the engine's archive stream).

    It counts what passed through and keeps the last bytes, so a reader can tell an archive that
    ended with its end-of-archive marker from one the engine cut short (`ends_archive_at`)."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._pending = b""
        self.total = 0
        self._tail = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
            self.total += len(self._pending)
            self._tail = (self._tail + self._pending)[-TAIL_BYTES:]
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def ends_archive_at(self, offset: int) -> bool:
        """Whether the stream, read to its end, holds only the end-of-archive marker (and zero
        padding) after `offset`, where a tar reader found no further member."""
        while self.read(64 * 1024):
            pass
        trailer = self.total - offset
        return 2 * tarfile.BLOCKSIZE <= trailer <= len(self._tail) and not self._tail[-trailer:].strip(b"\0")
