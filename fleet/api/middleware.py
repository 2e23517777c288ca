"""Keeps HTML error pages away from /api: unhandled exceptions become the JSON error body."""

from __future__ import annotations

import logging

from django.conf import settings

from .errors import database_away, json_error

logger = logging.getLogger("fleet.api")
proxy_logger = logging.getLogger("fleet.proxy")


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
        away = database_away(exception, request.method, request.path)  # outside DRF's views: a middleware's query
        if away is not None:
            return json_error(away.message, away.code, 503)
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return json_error("Internal server error.", "server_error", 500)


class ProxyHeaderWarningMiddleware:
    """Warns once per process when requests carry X-Forwarded-For while NUM_PROXIES is 0: behind
    a proxy, every client then shares the proxy's address and one login rate-limit bucket."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.checking = not settings.REST_FRAMEWORK.get("NUM_PROXIES")

    def __call__(self, request):
        if self.checking and request.META.get("HTTP_X_FORWARDED_FOR"):
            self.checking = False
            proxy_logger.warning(
                "Requests arrive with X-Forwarded-For but NUM_PROXIES is 0: every client behind the proxy "
                "shares one per-IP rate limit. Set NUM_PROXIES to the number of proxies in front of Fleet."
            )
        return self.get_response(request)
