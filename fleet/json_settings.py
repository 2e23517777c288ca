"""Settings that hold a JSON object (a dict in settings.py, or its JSON text from the environment):
one reading and one error for all of them."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def json_object_setting(name: str, *, holds: str) -> dict:
    """The setting `name` as a dict; ImproperlyConfigured, saying it `holds` what, when it is not
    a JSON object."""
    value = getattr(settings, name)
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object of {holds}.")
    return value
