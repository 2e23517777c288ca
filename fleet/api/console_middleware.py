"""Django's middleware of the admin console, which /api requests skip.

Sessions, CSRF, Django's authentication and messages serve the console alone: every /api view
is exempt from CSRF (DRF's views and api_not_found), authenticates with Fleet's own
credentials (fleet.api.authentication: a bearer token, the API's cookie with its own origin
check, or a workspace key; never Django's session) and sends no message. Run for an /api
request they parsed its cookies, built a lazy session and user and a message store, about
0.04 ms of CPU each time (docs/performance.md, "Small authenticated requests").

Each class here is Django's own and is named in MIDDLEWARE in its place, so Django's admin
checks, which look for these classes or their subclasses, still hold.
tests/fleet/test_console_middleware.py checks that no /api route reads what they would set.
"""

from __future__ import annotations

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.middleware import csrf

from .middleware import is_api_request


class _SkippedByApi:
    def __call__(self, request):
        if is_api_request(request):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_SkippedByApi, sessions.SessionMiddleware):
    pass


class CsrfViewMiddleware(_SkippedByApi, csrf.CsrfViewMiddleware):
    # Its process_view still runs for /api views (Django calls it from the handler): each is
    # exempt, and it returns at once for them.
    pass


class AuthenticationMiddleware(_SkippedByApi, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_SkippedByApi, messages.MessageMiddleware):
    pass
