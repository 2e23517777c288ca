"""fleet.api.console_middleware: sessions, CSRF, Django's authentication and messages serve the
console and are skipped by /api requests, which need none of them."""

from __future__ import annotations

from django.core import checks
from django.http import HttpResponse
from django.test import Client, RequestFactory

from fleet.api import console_middleware
from tests.factories.accounts import AdminFactory
from tests.support import url_patterns

CHAIN = (console_middleware.SessionMiddleware, console_middleware.CsrfViewMiddleware,
         console_middleware.AuthenticationMiddleware, console_middleware.MessageMiddleware)


def _through_the_chain(path: str):
    seen = {}

    def view(request):
        seen.update(session=hasattr(request, "session"), user=hasattr(request, "user"),
                    messages=hasattr(request, "_messages"), csrf="CSRF_COOKIE" in request.META)
        return HttpResponse()

    handler = view
    for middleware in reversed(CHAIN):
        handler = middleware(handler)
    request = RequestFactory().get(path, HTTP_COOKIE="sessionid=abc; csrftoken=" + "x" * 32)
    handler(request)
    return seen


def test_an_api_request_skips_them_and_a_console_request_gets_them_all(db):
    assert _through_the_chain("/api/agents") == {"session": False, "user": False, "messages": False, "csrf": False}
    assert _through_the_chain("/api") == {"session": False, "user": False, "messages": False, "csrf": False}
    assert _through_the_chain("/admin/") == {"session": True, "user": True, "messages": True, "csrf": True}
    assert _through_the_chain("/apiary") == {"session": True, "user": True, "messages": True, "csrf": True}


def test_every_api_view_is_exempt_from_csrf():
    api = [(route, pattern.callback) for route, pattern in url_patterns() if route.startswith("api")]
    assert len(api) > 50
    assert [route for route, callback in api if not getattr(callback, "csrf_exempt", False)] == []


def test_a_console_session_is_no_api_credential_and_the_console_still_signs_in(db):
    console = Client()
    console.force_login(AdminFactory())
    assert console.get("/admin/").status_code == 200  # the session, the user and the messages
    answer = console.get("/api/auth/me")
    assert answer.status_code == 401
    assert "Set-Cookie" not in answer.headers


def test_djangos_admin_checks_still_find_them():
    assert [e.id for e in checks.run_checks() if e.id.startswith("admin.")] == []
