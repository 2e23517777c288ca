"""Reads for accounts: what the public bootstrap screen may know."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from .bot_protection import BotProtection, bot_protection_current
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


@dataclass(frozen=True)
class BootstrapStatus:
    needs_first_admin: bool
    oauth_login_enabled: bool
    platform_mode: str
    signup_enabled: bool
    bot_protection: BotProtection


def bootstrap_status() -> BootstrapStatus:
    """GET /auth/bootstrap-status (shown by accounts.serializers.BootstrapStatusOut)."""
    return BootstrapStatus(
        needs_first_admin=needs_first_admin(),
        oauth_login_enabled=settings.OAUTH_LOGIN_ENABLED,
        platform_mode=settings.PLATFORM_MODE,
        signup_enabled=settings.SIGNUP_ENABLED,
        bot_protection=bot_protection_current(),
    )
