"""Keeps HTML error pages away from /api: unhandled exceptions become the JSON error body."""

from __future__ import annotations

import logging

from .errors import json_error

logger = logging.getLogger("fleet.api")


def is_api_request(request) -> bool:
    """True for /api and everything under it: the paths that must never get an HTML error."""
    return request.path == "/api" or request.path.startswith("/api/")


class ApiErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_api_request(request):
            return None
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return json_error("Internal server error.", "server_error", 500)
