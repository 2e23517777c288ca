"""Content negotiation that answers the common case without parsing: every route renders JSON
alone (fleet.api.renderers), and nearly every client asks for it, for anything, or says
nothing. DRF's own negotiation parses the Accept header into media types for each request, a
twentieth of GET /api/agents/:id's CPU; any other Accept header, or a format asked for in the
URL, still goes through it (and is refused with 406 as before when nothing matches)."""

from __future__ import annotations

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.settings import api_settings

_JSON = "application/json"
_PLAIN_ACCEPTS = frozenset({None, "*/*", _JSON})  # an empty header is a 406 in DRF


class JsonFirstNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        if (
            renderers
            and renderers[0].media_type == _JSON
            and format_suffix is None
            and request.META.get("HTTP_ACCEPT") in _PLAIN_ACCEPTS
            and api_settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], _JSON  # what DRF answers for these three
        return super().select_renderer(request, renderers, format_suffix)
