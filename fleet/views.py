"""Kernel views: the JSON 404 for unknown /api routes."""

from .api.errors import json_error


def api_not_found(request, *args, **kwargs):
    return json_error("Not found.", "not_found", 404)
