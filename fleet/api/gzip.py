"""Django's GZipMiddleware at a cheaper compression level.

Django compresses at level 6. On the 590 KB body of GET /api/agents (1,000 agents) zlib takes
about 6.5 ms there and 2.7 ms at level 1, for 50 KB instead of 43 KB; levels 2-3 are no faster
than 1 and come out larger, 4-5 save under 1.5 ms (bench/agents_list.py prints the figures).
The API's bodies are repetitive JSON, so the fast level keeps most of the gain.
"""

from __future__ import annotations

import gzip
import secrets

from django.middleware.gzip import GZipMiddleware as DjangoGZipMiddleware
from django.middleware.gzip import re_accepts_gzip
from django.utils.cache import patch_vary_headers

COMPRESS_LEVEL = 1


def compress(content: bytes, *, level: int = COMPRESS_LEVEL, max_random_bytes: int = 0) -> bytes:
    """django.utils.text.compress_string at `level`: gzip with mtime 0 and, against BREACH, a
    file name of random length in the header."""
    return with_random_name(gzip.compress(content, compresslevel=level, mtime=0), max_random_bytes)


def with_random_name(compressed: bytes, max_random_bytes: int) -> bytes:
    """A gzip member (made with no file name) given a file name of random length, per answer:
    a body compressed once and kept (agents.list_cache) still varies in length (BREACH)."""
    if not max_random_bytes:
        return compressed
    header = bytearray(compressed[:10])
    header[3] = gzip.FNAME
    filename = b"a" * secrets.randbelow(max_random_bytes) + b"\x00"
    return bytes(header) + filename + compressed[10:]


class GZipMiddleware(DjangoGZipMiddleware):
    """Django's middleware, the same rules; only whole (non-streaming) bodies change level.
    Streaming responses keep Django's path (level 6)."""

    compress_level = COMPRESS_LEVEL

    def process_response(self, request, response):
        if response.get("Content-Type", "").startswith("text/event-stream"):
            return response  # events go out as they come; a compressor would hold them back
        if response.streaming:
            return super().process_response(request, response)
        if len(response.content) < 200 or response.has_header("Content-Encoding"):
            return response
        patch_vary_headers(response, ("Accept-Encoding",))
        if not re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            return response
        compressed = compress(response.content, level=self.compress_level, max_random_bytes=self.max_random_bytes)
        if len(compressed) >= len(response.content):  # only when it is actually shorter
            return response
        response.content = compressed
        response.headers["Content-Length"] = str(len(compressed))
        # A strong ETag becomes weak (RFC 9110 section 8.8.1), as Django does.
        etag = response.get("ETag")
        if etag and etag.startswith('"'):
            response.headers["ETag"] = "W/" + etag
        response.headers["Content-Encoding"] = "gzip"
        return response
