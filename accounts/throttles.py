"""Per-IP rate limits of the public sign-in routes (spec: Authentication rule 7)."""

from __future__ import annotations

from fleet.api.throttling import IPRateThrottle


class LoginThrottle(IPRateThrottle):
    scope = "auth_login"
    rate = "20/15m"


class OAuthLoginThrottle(IPRateThrottle):
    scope = "auth_oauth_login"
    rate = "20/15m"


class SignupBurstThrottle(IPRateThrottle):
    scope = "auth_signup_burst"
    rate = "5/10m"


class SignupDailyThrottle(IPRateThrottle):
    scope = "auth_signup_daily"
    rate = "20/1d"
