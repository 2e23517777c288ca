"""Authentication endpoints (spec: "Authentication endpoints"). Thin views over services."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from fleet.api.authentication import read_credential
from fleet.errors import Forbidden, InvalidCredentials, NotAuthenticated
from fleet.api.permissions import SessionOnly
from fleet.api.views import PUBLIC, ApiView, PublicApiView

from . import services
from .avatars import avatar_problem
from .cookies import session_cookie_clear, session_cookie_set
from .oauth import PROVIDERS, GITHUB, provider_identity
from .selectors import bootstrap_status
from .throttles import LoginThrottle, OAuthLoginThrottle, SignupBurstThrottle, SignupDailyThrottle
from .tokens import principal_from_session_token, session_token_issue

MAX_PROVIDER_TOKEN_LENGTH = 8192


class UserRecordSerializer(serializers.Serializer):
    """The user record of GET /auth/me (documentation of user_record())."""

    id = serializers.UUIDField()
    email = serializers.EmailField()
    name = serializers.CharField(allow_null=True)
    role = serializers.ChoiceField(choices=["user", "admin"])
    provider = serializers.CharField(allow_null=True)
    avatar = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


def user_record(user) -> dict:
    return {
        "id": str(user.id),
        "email": user.email,
        "name": user.name,
        "role": user.role,
        "provider": user.provider,
        "avatar": user.avatar,
        "created_at": user.created_at.isoformat(),
    }


SUCCESS = inline_serializer("Success", {"success": serializers.BooleanField()})
TOKEN = inline_serializer("SessionToken", {"token": serializers.CharField()})


def _password_field(**kwargs) -> serializers.CharField:
    # Passwords are taken as typed: no trimming.
    return serializers.CharField(trim_whitespace=False, max_length=services.MAX_PASSWORD, **kwargs)


class BootstrapStatusApi(PublicApiView):
    access = {"GET": PUBLIC}

    @extend_schema(
        responses=inline_serializer(
            "BootstrapStatus",
            {
                "needsFirstAdmin": serializers.BooleanField(),
                "oauthLoginEnabled": serializers.BooleanField(),
                "platformMode": serializers.ChoiceField(choices=["selfhosted", "paas"]),
                "signupEnabled": serializers.BooleanField(),
                "signupBotProtection": inline_serializer(
                    "SignupBotProtection",
                    {
                        "enabled": serializers.BooleanField(),
                        "provider": serializers.CharField(),
                        "siteKey": serializers.CharField(allow_null=True),
                        "configured": serializers.BooleanField(),
                        "configurationError": serializers.CharField(allow_null=True),
                    },
                ),
            },
        )
    )
    def get(self, request):
        return Response(bootstrap_status())


class SignupApi(PublicApiView):
    access = {"POST": PUBLIC}
    throttle_classes = [SignupBurstThrottle, SignupDailyThrottle]

    class InputSerializer(serializers.Serializer):
        email = serializers.EmailField(max_length=255)
        password = _password_field(min_length=services.MIN_PASSWORD)
        botProtectionToken = serializers.CharField(required=False, allow_null=True, allow_blank=True)

    @extend_schema(
        request=InputSerializer,
        responses={201: inline_serializer("SignupResult", {"id": serializers.UUIDField(), "email": serializers.EmailField()})},
    )
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_signup(
            email=data.validated_data["email"],
            password=data.validated_data["password"],
            bot_protection_token=data.validated_data.get("botProtectionToken"),
            remote_ip=request.META.get("REMOTE_ADDR"),
        )
        return Response({"id": str(user.id), "email": user.email}, status=201)


class LoginApi(PublicApiView):
    access = {"POST": PUBLIC}
    throttle_classes = [LoginThrottle]

    class InputSerializer(serializers.Serializer):
        email = serializers.EmailField(max_length=255)
        password = _password_field()

    @extend_schema(request=InputSerializer, responses=TOKEN)
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_authenticate(**data.validated_data)
        services.user_record_login(user=user)
        return Response({"token": session_token_issue(user=user)})


class MeApi(ApiView):
    access = {"GET": (SessionOnly,)}

    @extend_schema(responses=UserRecordSerializer)
    def get(self, request):
        return Response(user_record(self.principal.user))


class ProfileApi(ApiView):
    access = {"PATCH": (SessionOnly,)}

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(min_length=1, max_length=100, allow_null=True, required=False)
        avatar = serializers.CharField(allow_null=True, required=False, trim_whitespace=False)

        def validate_avatar(self, value):
            problem = value is not None and avatar_problem(value)
            if problem:
                raise serializers.ValidationError(problem)
            return value

    @extend_schema(
        request=InputSerializer,
        responses=inline_serializer(
            "Profile",
            {"name": serializers.CharField(allow_null=True), "avatar": serializers.CharField(allow_null=True)},
        ),
    )
    def patch(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = services.user_profile_update(user=self.principal.user, data=data.validated_data)
        return Response({"name": user.name, "avatar": user.avatar})


class PasswordApi(ApiView):
    access = {"PATCH": (SessionOnly,)}

    class InputSerializer(serializers.Serializer):
        currentPassword = _password_field()
        newPassword = _password_field(min_length=services.MIN_PASSWORD)

    @extend_schema(request=InputSerializer, responses=SUCCESS)
    def patch(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.user_password_change(
            user=self.principal.user,
            current_password=data.validated_data["currentPassword"],
            new_password=data.validated_data["newPassword"],
        )
        return Response({"success": True})


class OAuthLoginDisabled(Forbidden):
    code = "oauth_login_disabled"
    default_message = "OAuth login is disabled."


class OAuthLoginApi(PublicApiView):
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

    @extend_schema(
        request=InputSerializer,
        responses=inline_serializer(
            "OAuthLoginResult", {"token": serializers.CharField(), "user": UserRecordSerializer()}
        ),
    )
    def post(self, request):
        if not settings.OAUTH_LOGIN_ENABLED:
            raise OAuthLoginDisabled()
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        identity = provider_identity(
            request=request._request,
            provider=data.validated_data["provider"],
            access_token=data.validated_data.get("oauthAccessToken"),
            id_token=data.validated_data.get("oauthIdToken"),
        )
        user = services.user_oauth_sign_in(identity=identity)
        services.user_record_login(user=user)
        token = session_token_issue(user=user)
        response = Response({"token": token, "user": user_record(user)})
        session_cookie_set(response, token=token)
        return response


class SessionUpgradeApi(ApiView):
    access = {"POST": (SessionOnly,)}

    @extend_schema(request=None, responses=SUCCESS)
    def post(self, request):
        if not request.META.get("HTTP_AUTHORIZATION", "").strip():
            raise NotAuthenticated("Send the session as 'Authorization: Bearer <token>' to upgrade it.")
        # With an Authorization header present, the credential is its Bearer token (explicit
        # headers beat the cookie). Verify again, on its own, the exact token that goes into the cookie.
        token = read_credential(request).value
        principal = principal_from_session_token(token)
        if principal is None or principal.user.pk != self.principal.user.pk:
            raise InvalidCredentials()
        response = Response({"success": True})
        session_cookie_set(response, token=token)
        return response


class LogoutApi(PublicApiView):
    access = {"POST": PUBLIC}

    @extend_schema(request=None, responses=SUCCESS)
    def post(self, request):
        response = Response({"success": True})
        session_cookie_clear(response)
        return response
