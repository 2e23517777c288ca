"""Each API request that may change something (POST, PUT, PATCH, DELETE) runs in one transaction
with the record of it, written once its final answer is known. The recorder comes from the app
that keeps the record (`audit`, above this layer), registered when it is ready: a callback
passed down, never an import upward."""

from __future__ import annotations

from collections.abc import Callable

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# (DRF request, view, response) -> None; raises to undo the change (the row could not be written).
WriteRecorder = Callable[[object, object, object], None]

_recorder: WriteRecorder | None = None


def register_write_recorder(recorder: WriteRecorder) -> None:
    global _recorder
    _recorder = recorder


def write_recorder() -> WriteRecorder | None:
    return _recorder
