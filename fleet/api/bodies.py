"""Raw request bodies for routes that take bytes rather than JSON (files, provider webhooks):
read from the stream up to a cap, never past it, 413 above it."""

from __future__ import annotations

from fleet.errors import InvalidRequest, PayloadTooLarge


def declared_length(request) -> int:
    """The body's Content-Length (0 when missing or not a number)."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def raw_body(request, limit: int, *, too_large: str) -> bytes:
    """The request's bytes, at most `limit` (else 413 with the sentence `too_large`). Read from
    the stream: DATA_UPLOAD_MAX_MEMORY_SIZE is for form bodies, and a signature is over the
    exact bytes."""
    if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        # Django reads a body by its Content-Length: a chunked one would arrive empty.
        raise InvalidRequest("Send the body with a Content-Length (chunked bodies are not read).")
    if declared_length(request) > limit:
        raise PayloadTooLarge(too_large)
    data = request._request.read(limit + 1)
    if len(data) > limit:
        raise PayloadTooLarge(too_large)
    return data
