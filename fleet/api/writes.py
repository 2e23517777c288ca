"""Each API request that may change something (POST, PUT, PATCH, DELETE) runs in one transaction
with the record of it, written once its final answer is known. The recorder comes from the app
that keeps the record (`audit`, above this layer), registered when it is ready: a callback
passed down, never an import upward. Its `before` reads what the change may take away (the
workspaces the path's target is in, which a delete removes) before the view runs."""

from __future__ import annotations

from collections.abc import Callable

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# (DRF request, view, response, what `before` read) -> None; raises to undo the change.
WriteRecorder = Callable[[object, object, object, object], None]
# (the route's path parameters) -> what the recorder needs from before the change.
BeforeWrite = Callable[[dict], object]

_recorder: tuple[WriteRecorder, BeforeWrite] | None = None


def register_write_recorder(recorder: WriteRecorder | None, *, before: BeforeWrite | None = None) -> None:
    """Register the recorder (None: none, as a benchmark's "off")."""
    global _recorder
    _recorder = None if recorder is None else (recorder, before or (lambda kwargs: None))


def write_recorder() -> tuple[WriteRecorder, BeforeWrite] | None:
    return _recorder
