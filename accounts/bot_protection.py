"""Signup bot protection: Cloudflare Turnstile or Google reCAPTCHA, verified server-side.

`paas` requires a provider and fails closed without one; self-hosted may use `none`. A
provider that is chosen but misses a key fails closed in both modes, so a typo in the
configuration never silently opens signup.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import requests
from django.conf import settings

from fleet.errors import Forbidden

logger = logging.getLogger(__name__)

NONE = "none"
TURNSTILE = "turnstile"
RECAPTCHA = "recaptcha"
PROVIDERS = (NONE, TURNSTILE, RECAPTCHA)
MAX_TOKEN_LENGTH = 4096  # real tokens are about 2 KB; anything longer is not one


class BotProtectionFailed(Forbidden):
    code = "bot_protection_failed"
    default_message = "The bot-protection check failed; reload the page and try again."


@dataclass(frozen=True)
class BotProtection:
    provider: str
    site_key: str
    secret_key: str
    verify_url: str
    configuration_error: str | None

    @property
    def enabled(self) -> bool:
        return self.provider != NONE

    @property
    def configured(self) -> bool:
        return self.enabled and self.configuration_error is None

    @property
    def public_site_key(self) -> str | None:
        """The site key as bootstrap-status shows it: None when unset."""
        return self.site_key or None


def bot_protection_current() -> BotProtection:
    provider = (settings.SIGNUP_BOT_PROTECTION_PROVIDER or NONE).strip().lower()
    if provider == TURNSTILE:
        keys = ("TURNSTILE_SITE_KEY", "TURNSTILE_SECRET_KEY", "TURNSTILE_VERIFY_URL")
    elif provider == RECAPTCHA:
        keys = ("RECAPTCHA_SITE_KEY", "RECAPTCHA_SECRET_KEY", "RECAPTCHA_VERIFY_URL")
    elif provider == NONE:
        error = None
        if settings.PLATFORM_MODE == "paas":
            error = "paas requires SIGNUP_BOT_PROTECTION_PROVIDER to be turnstile or recaptcha."
        return BotProtection(NONE, "", "", "", error)
    else:
        return BotProtection(
            provider, "", "", "", "SIGNUP_BOT_PROTECTION_PROVIDER must be none, turnstile or recaptcha."
        )
    site_key, secret_key, verify_url = (getattr(settings, name, "") or "" for name in keys)
    missing = [name for name, value in zip(keys, (site_key, secret_key, verify_url), strict=True) if not value]
    error = f"{', '.join(missing)} must be set." if missing else None
    return BotProtection(provider, site_key, secret_key, verify_url, error)


def bot_protection_verify(*, token: str | None, remote_ip: str | None) -> None:
    """Raise BotProtectionFailed (403) unless the signup may go ahead."""
    protection = bot_protection_current()
    if protection.configuration_error:
        logger.error("Signup refused: bot protection misconfigured: %s", protection.configuration_error)
        raise BotProtectionFailed("Signup is unavailable: bot protection is not configured.")
    if not protection.enabled:
        return
    if not token or len(token) > MAX_TOKEN_LENGTH:
        raise BotProtectionFailed("A bot-protection token is required.")
    form = {"secret": protection.secret_key, "response": token}
    if remote_ip:
        form["remoteip"] = remote_ip
    try:
        response = requests.post(
            protection.verify_url,
            data=form,
            timeout=settings.OUTBOUND_TIMEOUT_SECONDS,
            allow_redirects=False,
        )
        verdict = response.json() if response.status_code == 200 else {}
    except (requests.RequestException, ValueError) as exc:
        logger.warning("Bot-protection verification via %s failed: %s", protection.provider, exc)
        raise BotProtectionFailed("The bot-protection token could not be verified; try again.") from exc
    if not isinstance(verdict, dict) or verdict.get("success") is not True:
        raise BotProtectionFailed()
