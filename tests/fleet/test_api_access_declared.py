"""Every API route states its access per method (fleet.api.views.ApiView), or it cannot exist."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from fleet.api.permissions import IsAuthenticated
from fleet.api.views import ApiView
from tests.support import url_patterns

# The OpenAPI document and its browser: drf-spectacular's own views, public by its settings.
THIRD_PARTY = (SpectacularAPIView, SpectacularSwaggerView)


def test_every_api_view_declares_its_access_per_method():
    drf_views = [(route, getattr(pattern.callback, "view_class", None)) for route, pattern in url_patterns()]
    drf_views = [(route, cls) for route, cls in drf_views if route.startswith("api/") and cls]
    assert drf_views, "the URLconf lists no API view"
    for route, view_class in drf_views:
        if issubclass(view_class, THIRD_PARTY):
            continue
        assert issubclass(view_class, ApiView), f"{route}: {view_class.__name__} is not an ApiView"
        assert view_class.access, f"{route}: {view_class.__name__} declares no access"


def test_a_view_that_implements_a_method_without_declaring_it_is_refused():
    with pytest.raises(ImproperlyConfigured, match="DELETE"):

        class Leaky(ApiView):  # noqa: F841 - defining it is the test
            access = {"GET": (IsAuthenticated,)}

            def get(self, request):
                return None

            def delete(self, request):
                return None


def test_head_options_and_missing_methods_are_checked_as_the_reading_method():
    class Reader(ApiView):
        access = {"GET": (IsAuthenticated,)}

        def get(self, request):
            return None

    assert Reader.access_of("HEAD") == Reader.access_of("OPTIONS") == Reader.access_of("PUT") == (IsAuthenticated,)
