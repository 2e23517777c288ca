"""Keeping a runtime's secret out of what reaches the browser: every body and frame the proxy
passes on has the agent's token replaced by a placeholder of the same length (lengths and
offsets stay true), even when the token is cut across two chunks."""

from __future__ import annotations


class SecretScrubber:
    def __init__(self, secret: str):
        self.secret = secret.encode()
        self.placeholder = b"x" * len(self.secret)
        self._tail = b""

    def feed(self, chunk: bytes) -> bytes:
        """What can be passed on of `chunk` now; the last len(secret)-1 bytes wait for the next."""
        if not self.secret:
            return chunk
        data = (self._tail + chunk).replace(self.secret, self.placeholder)
        keep = len(self.secret) - 1
        self._tail = data[-keep:] if keep and len(data) > keep else (data if keep else b"")
        return data[: len(data) - len(self._tail)]

    def flush(self) -> bytes:
        rest, self._tail = self._tail, b""
        return rest

    def text(self, frame: str) -> str:
        return frame.replace(self.secret.decode(), self.placeholder.decode()) if self.secret else frame

    def whole(self, data: bytes) -> bytes:
        return data.replace(self.secret, self.placeholder) if self.secret else data
