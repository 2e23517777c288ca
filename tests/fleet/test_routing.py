"""fleet.api.routing: skipping an app's routes by first segment changes no resolution."""

from __future__ import annotations

import uuid

from django.urls import URLPattern, URLResolver, resolve, reverse
from django.urls.resolvers import RoutePattern

from fleet import urls
from fleet.api.routing import FirstSegmentResolver, first_segments

SAMPLES = {"uuid": uuid.UUID(int=7), "string": "x", "int": 3, "slug": "s", "path": "a/b"}


def _named_routes(patterns, namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _named_routes(pattern.url_patterns, namespace)
        elif isinstance(pattern, URLPattern) and pattern.name and isinstance(pattern.pattern, RoutePattern):
            yield pattern


def test_every_api_route_resolves_to_itself_through_the_indexed_includes():
    assert any(isinstance(p, FirstSegmentResolver) for p in urls.api_patterns)
    checked = 0
    for pattern in _named_routes(urls.api_patterns):
        converters = pattern.pattern.converters
        kwargs = {name: SAMPLES[type(c).__name__.removesuffix("Converter").lower()] for name, c in converters.items()}
        match = resolve(reverse(pattern.name, kwargs=kwargs))
        assert match.url_name == pattern.name
        checked += 1
    assert checked > 50


def test_unknown_first_segments_still_get_the_json_404(client):
    response = client.get("/api/no-such-thing/at-all")

    assert response.status_code == 404
    assert response.json()["error"]


def test_routes_starting_with_a_converter_are_not_indexed():
    from django.urls import path

    assert first_segments([path("<uuid:x>/y", lambda r: None)]) is None
    assert first_segments([path("a/<uuid:x>", lambda r: None), path("b", lambda r: None)]) == {"a", "b"}
