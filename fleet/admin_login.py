"""/admin/login/ throttled like the API login: per client IP and per account tried.

Only sign-in attempts (POST) count. Over the limit the form is not even checked: 429 with
Retry-After, so guessing passwords costs the same here as at POST /api/auth/login.
"""

from __future__ import annotations

import math

from django.conf import settings
from django.contrib import admin
from django.http import HttpResponse

from fleet.api.throttling import IPRateThrottle, rate_hit


def client_ip(request) -> str:
    """The caller's address as the API's throttles see it (NUM_PROXIES decides X-Forwarded-For)."""
    return IPRateThrottle().get_ident(request)


def admin_login(request, extra_context=None):
    if request.method == "POST":
        account = (request.POST.get("username") or "").strip().lower()[:255]
        wait = rate_hit("admin_login_ip", client_ip(request), settings.ADMIN_LOGIN_RATE_PER_IP) or (
            account and rate_hit("admin_login_account", account, settings.ADMIN_LOGIN_RATE_PER_ACCOUNT)
        )
        if wait:
            return HttpResponse(
                "Too many sign-in attempts; try again later.\n",
                status=429,
                content_type="text/plain",
                headers={"Retry-After": str(math.ceil(wait))},
            )
    return admin.site.login(request, extra_context)
