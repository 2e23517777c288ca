"""Reads for accounts: what the public bootstrap screen may know."""

from __future__ import annotations

from django.conf import settings

from .bot_protection import bot_protection_current
from .models import User


def needs_first_admin() -> bool:
    """True only while an empty self-hosted installation lets the next signup claim admin.

    False when signup is off or when signup would fail closed on misconfigured bot
    protection; `paas` never has a first-admin claim.
    """
    return (
        settings.PLATFORM_MODE == "selfhosted"
        and settings.SIGNUP_ENABLED
        and bot_protection_current().configuration_error is None
        and not User.objects.exists()
    )


def bootstrap_status() -> dict:
    """GET /auth/bootstrap-status: flags only, never counts, emails or secrets."""
    return {
        "needsFirstAdmin": needs_first_admin(),
        "oauthLoginEnabled": settings.OAUTH_LOGIN_ENABLED,
        "platformMode": settings.PLATFORM_MODE,
        "signupEnabled": settings.SIGNUP_ENABLED,
        "signupBotProtection": bot_protection_current().public_status(),
    }
