"""Authentication endpoints (spec: "Authentication endpoints"). Thin views over services."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from fleet.api.authentication import read_credential
from fleet.api.fields import StrictCharField
from fleet.api.origin import is_same_origin
from fleet.api.permissions import SessionOnly
from fleet.api.serializers import SuccessOut
from fleet.api.views import PUBLIC, ApiView, PublicApiView
from fleet.errors import FleetError, Forbidden, InvalidCredentials, NotAuthenticated

from . import services
from .avatars import avatar_problem
from .cookies import session_cookie_clear, session_cookie_set
from .oauth import GITHUB, PROVIDERS, provider_identity
from .selectors import bootstrap_status
from .serializers import (
    BootstrapStatusOut,
    OAuthLoginOut,
    ProfileOut,
    SessionTokenOut,
    SignupOut,
    UserOut,
)
from .throttles import LoginThrottle, OAuthLoginThrottle, SignupBurstThrottle, SignupDailyThrottle
from .tokens import principal_from_session_token, session_token_issue, sessions_revoke, user_from_session_token

MAX_PROVIDER_TOKEN_LENGTH = 8192


def _password_field(**kwargs) -> serializers.CharField:
    # Passwords are taken as typed: no trimming.
    return serializers.CharField(trim_whitespace=False, max_length=services.MAX_PASSWORD, **kwargs)


class BootstrapStatusApi(PublicApiView):
    access = {"GET": PUBLIC}

    @extend_schema(responses=BootstrapStatusOut)
    def get(self, request):
        """Whether the installation still needs its first platform admin."""
        return Response(BootstrapStatusOut(bootstrap_status()).data)


class SignupApi(PublicApiView):
    request_examples = {
        "POST": {
            "A new account": {"email": "ada@example.com", "password": "<a passphrase of 8 or more characters>"},
        },
    }
    documented_errors = (403, 409)
    access = {"POST": PUBLIC}
    throttle_classes = [SignupBurstThrottle, SignupDailyThrottle]

    class InputSerializer(serializers.Serializer):
        email = serializers.EmailField(max_length=255)
        password = _password_field(min_length=services.MIN_PASSWORD)
        botProtectionToken = serializers.CharField(required=False, allow_null=True, allow_blank=True)

    @extend_schema(request=InputSerializer, responses={201: SignupOut})
    def post(self, request):
        """Create an account."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_signup(
            email=data.validated_data["email"],
            password=data.validated_data["password"],
            bot_protection_token=data.validated_data.get("botProtectionToken"),
            remote_ip=request.META.get("REMOTE_ADDR"),
        )
        return Response(SignupOut(user).data, status=201)


class LoginApi(PublicApiView):
    request_examples = {
        "POST": {
            "Email and password": {"email": "ada@example.com", "password": "<your password>"},
        },
    }
    documented_errors = (401, 403, 503)  # 503 cache_unavailable: its throttle's store is away
    access = {"POST": PUBLIC}
    throttle_classes = [LoginThrottle]

    class InputSerializer(serializers.Serializer):
        email = serializers.EmailField(max_length=255)
        password = _password_field()

    @extend_schema(request=InputSerializer, responses=SessionTokenOut)
    def post(self, request):
        """Sign in with email and password: a session token."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_authenticate(**data.validated_data)
        services.user_record_login(user=user)
        return Response(SessionTokenOut({"token": session_token_issue(user=user)}).data)


class MeApi(ApiView):
    access = {"GET": (SessionOnly,)}

    @extend_schema(responses=UserOut)
    def get(self, request):
        """The signed-in user."""
        return Response(UserOut(self.principal.user).data)


class ProfileApi(ApiView):
    request_examples = {
        "PATCH": {
            "A new display name": {"name": "Ada Lovelace"},
        },
    }
    documented_errors = (409,)
    access = {"PATCH": (SessionOnly,)}

    class InputSerializer(serializers.Serializer):
        # Control and bidi characters dropped, as workspace names (defect 18).
        name = StrictCharField(min_length=1, max_length=100, allow_null=True, required=False)
        avatar = serializers.CharField(allow_null=True, required=False, trim_whitespace=False)

        def validate_avatar(self, value):
            problem = value is not None and avatar_problem(value)
            if problem:
                raise serializers.ValidationError(problem)
            return value

    @extend_schema(request=InputSerializer, responses=ProfileOut)
    def patch(self, request):
        """Change the caller's name or avatar."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_profile_update(user=self.principal.user, data=data.validated_data)
        return Response(ProfileOut(user).data)


class PasswordApi(ApiView):
    request_examples = {
        "PATCH": {
            "Change it": {"currentPassword": "<current password>", "newPassword": "<a new passphrase>"},
        },
    }
    access = {"PATCH": (SessionOnly,)}

    class InputSerializer(serializers.Serializer):
        currentPassword = _password_field()
        newPassword = _password_field(min_length=services.MIN_PASSWORD)

    @extend_schema(request=InputSerializer, responses=SuccessOut)
    def patch(self, request):
        """Change the caller's password (every session ends: sign in again)."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.user_password_change(
            user=self.principal.user,
            current_password=data.validated_data["currentPassword"],
            new_password=data.validated_data["newPassword"],
        )
        return Response(SuccessOut({"success": True}).data)


class OAuthLoginDisabled(Forbidden):
    code = "oauth_login_disabled"
    default_message = "OAuth login is disabled."


class OAuthLoginApi(PublicApiView):
    request_examples = {
        "POST": {
            "With a GitHub access token": {
                "provider": "github", "oauthAccessToken": "<token from GitHub's OAuth flow>",
            },
        },
    }
    documented_errors = (401, 403, 502)
    access = {"POST": PUBLIC}
    throttle_classes = [OAuthLoginThrottle]

    class InputSerializer(serializers.Serializer):
        provider = serializers.ChoiceField(choices=PROVIDERS)
        oauthAccessToken = serializers.CharField(required=False, max_length=MAX_PROVIDER_TOKEN_LENGTH)
        oauthIdToken = serializers.CharField(required=False, max_length=MAX_PROVIDER_TOKEN_LENGTH)

        def validate(self, attrs):
            if not attrs.get("oauthAccessToken") and not attrs.get("oauthIdToken"):
                raise serializers.ValidationError({"oauthAccessToken": "Send oauthAccessToken or oauthIdToken."})
            if attrs["provider"] == GITHUB and not attrs.get("oauthAccessToken"):
                raise serializers.ValidationError({"oauthAccessToken": "GitHub sign-in needs oauthAccessToken."})
            return attrs

    @extend_schema(request=InputSerializer, responses=OAuthLoginOut)
    def post(self, request):
        """Sign in with an OAuth provider's identity."""
        if not settings.OAUTH_LOGIN_ENABLED:
            raise OAuthLoginDisabled()
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        identity = provider_identity(
            provider=data.validated_data["provider"],
            access_token=data.validated_data.get("oauthAccessToken"),
            id_token=data.validated_data.get("oauthIdToken"),
        )
        user = services.user_oauth_sign_in(identity=identity)
        services.user_record_login(user=user)
        token = session_token_issue(user=user)
        response = Response(OAuthLoginOut({"token": token, "user": user}).data)
        session_cookie_set(response, token=token)
        return response


class SessionUpgradeApi(ApiView):
    access = {"POST": (SessionOnly,)}

    @extend_schema(request=None, responses=SuccessOut)
    def post(self, request):
        """Copy the Bearer session into the service_auth cookie."""
        if not request.META.get("HTTP_AUTHORIZATION", "").strip():
            raise NotAuthenticated("Send the session as 'Authorization: Bearer <token>' to upgrade it.")
        # With an Authorization header present, the credential is its Bearer token (explicit
        # headers beat the cookie). Verify again, on its own, the exact token that goes into the cookie.
        token = read_credential(request).value
        principal = principal_from_session_token(token)
        if principal is None or principal.user.pk != self.principal.user.pk:
            raise InvalidCredentials()
        response = Response(SuccessOut({"success": True}).data)
        session_cookie_set(response, token=token)
        return response


class LogoutApi(PublicApiView):
    access = {"POST": PUBLIC}

    @extend_schema(request=None, responses=SuccessOut)
    def post(self, request):
        """Sign out: the session token stops working."""
        # Logout stays public (a stale credential must not block it), but a session it can
        # verify ends everywhere. A cookie counts only from our own origin: a cross-site form
        # must not sign the user out of every device.
        credential = _credential_or_none(request)
        if credential is not None and credential.kind == "session" and (
            not credential.from_cookie or is_same_origin(request)
        ):
            user = user_from_session_token(credential.value)
            if user is not None:
                sessions_revoke(user=user)
        response = Response(SuccessOut({"success": True}).data)
        session_cookie_clear(response)
        return response


def _credential_or_none(request):
    try:
        return read_credential(request)
    except FleetError:
        return None
