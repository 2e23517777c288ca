"""A file object over a stream of byte chunks, for reading a tar as it arrives."""

from __future__ import annotations

import io


class ChunkReader(io.RawIOBase):
    """A file object over an iterator of byte chunks (the engine's archive stream)."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size
