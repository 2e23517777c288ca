"""Faster URL resolution for the API's app includes.

fleet/urls.py mounts every app's routes with `path("", include(...))`. Django tries an include's
patterns one after another and raises Resolver404 for each one that fails, so GET
/api/agents/:id first walks, and fails, every route of accounts and workspaces: about 0.3 ms of
the 1 ms a small request costs. An include whose routes all begin with a literal first segment
(`auth/...`, `agents/...`) is skipped at once when the path's first segment is none of them; its
patterns, their order, reverse() and the OpenAPI schema are unchanged.
"""

from __future__ import annotations

from functools import cached_property

from django.urls import URLPattern, URLResolver
from django.urls.exceptions import Resolver404
from django.urls.resolvers import RoutePattern


def first_segments(patterns) -> frozenset[str] | None:
    """The literal first path segments of these routes, or None when one may start otherwise
    (a converter, a regular expression): then nothing can be skipped."""
    segments: set[str] = set()
    for pattern in patterns:
        if not isinstance(pattern.pattern, RoutePattern):
            return None
        route = str(pattern.pattern)
        if route == "" and isinstance(pattern, URLResolver):
            inner = first_segments(pattern.url_patterns)
            if inner is None:
                return None
            segments |= inner
            continue
        head = route.split("/", 1)[0]
        if not head or "<" in head:
            return None
        segments.add(head)
    return frozenset(segments)


class FirstSegmentResolver(URLResolver):
    @cached_property
    def _first_segments(self) -> frozenset[str] | None:
        return first_segments(self.url_patterns)

    def resolve(self, path):
        segments = self._first_segments
        if segments is not None and str(path).split("/", 1)[0] not in segments:
            raise Resolver404({"path": path})
        return super().resolve(path)


def indexed(patterns: list) -> list:
    """`patterns` with each `path("", include(...))` resolved through its first segments."""
    return [_indexed(pattern) for pattern in patterns]


def _indexed(pattern):
    if isinstance(pattern, URLPattern) or type(pattern) is not URLResolver or str(pattern.pattern) != "":
        return pattern
    return FirstSegmentResolver(
        pattern.pattern, pattern.urlconf_name, pattern.default_kwargs,
        app_name=pattern.app_name, namespace=pattern.namespace,
    )
