"""fleet.api.negotiation: the JSON fast path answers exactly what DRF's negotiation answers."""

from __future__ import annotations

import pytest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from fleet.api.negotiation import JsonFirstNegotiation
from fleet.api.renderers import FastJSONRenderer


class _EventStream(BaseRenderer):
    media_type = "text/event-stream"
    format = "txt"


_ACCEPTS = [None, "*/*", "application/json", "", "text/html", "application/json; indent=4",
            "text/event-stream", "text/html,application/json;q=0.9", "application/*", "*/*;q=0.1"]
_RENDERER_SETS = [[FastJSONRenderer()], [FastJSONRenderer(), _EventStream()], [_EventStream(), FastJSONRenderer()]]


def _answer(negotiation, accept, renderers, query=""):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/api/x" + query, **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except Exception as exc:  # noqa: BLE001 - the refusal is part of the answer compared
        return type(exc).__name__
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("renderers", _RENDERER_SETS, ids=["json", "json+sse", "sse+json"])
@pytest.mark.parametrize("accept", _ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=txt", "?format=xml"])
def test_every_answer_is_drfs(accept, renderers, query):
    assert _answer(JsonFirstNegotiation(), accept, renderers, query) == _answer(
        DefaultContentNegotiation(), accept, renderers, query)


def test_the_routes_use_it(user_client):
    assert user_client.get("/api/auth/me").headers["Content-Type"] == "application/json"
    assert user_client.get("/api/auth/me", HTTP_ACCEPT="application/json").status_code == 200
    refused = user_client.get("/api/auth/me", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406
    assert refused.json()["error"]
