"""Output shapes of the authentication routes (field names exactly as the spec writes them)."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import FlatOutput, TimestampField


class UserOut(FlatOutput, serializers.Serializer):
    """The user record: GET /auth/me, and `user` of POST /auth/oauth-login."""

    id = serializers.UUIDField()
    email = serializers.EmailField()
    name = serializers.CharField(allow_null=True)
    role = serializers.ChoiceField(choices=["user", "admin"])
    provider = serializers.CharField(allow_null=True)
    avatar = serializers.CharField(allow_null=True)
    created_at = TimestampField()


class SignupOut(serializers.Serializer):
    id = serializers.UUIDField()
    email = serializers.EmailField()


class SessionTokenOut(serializers.Serializer):
    token = serializers.CharField()


class OAuthLoginOut(serializers.Serializer):
    token = serializers.CharField()
    user = UserOut()


class ProfileOut(serializers.Serializer):
    name = serializers.CharField(allow_null=True)
    avatar = serializers.CharField(allow_null=True)


class BotProtectionOut(serializers.Serializer):
    """Signup's bot protection as anyone may see it: never the secret key."""

    enabled = serializers.BooleanField()
    provider = serializers.CharField()
    siteKey = serializers.CharField(source="public_site_key", allow_null=True)  # noqa: N815 - the spec's names
    configured = serializers.BooleanField()
    configurationError = serializers.CharField(source="configuration_error", allow_null=True)  # noqa: N815


class BootstrapStatusOut(serializers.Serializer):
    """What a sign-in screen needs before anyone signs in: flags only, never counts, emails or secrets."""

    needsFirstAdmin = serializers.BooleanField(source="needs_first_admin")  # noqa: N815
    oauthLoginEnabled = serializers.BooleanField(source="oauth_login_enabled")  # noqa: N815
    platformMode = serializers.ChoiceField(choices=["selfhosted", "paas"], source="platform_mode")  # noqa: N815
    signupEnabled = serializers.BooleanField(source="signup_enabled")  # noqa: N815
    signupBotProtection = BotProtectionOut(source="bot_protection")  # noqa: N815
