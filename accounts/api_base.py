"""Plumbing shared by the auth views: public-route credentials, and no 500 for big bodies."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from fleet.api.authentication import read_credential
from fleet.api.errors import ApiError, InvalidCredentials


class PublicRouteAuthentication(BaseAuthentication):
    """Public routes ignore credentials, except that conflicting ones are still 400.

    A stale cookie or an unverifiable token must not block login or logout, so nothing is
    verified here; read_credential only refuses two explicit credentials at once.
    """

    def authenticate(self, request):
        try:
            read_credential(request)
        except InvalidCredentials:  # a malformed Authorization header is simply ignored here
            pass
        return None


class PublicRouteSchema(OpenApiAuthenticationExtension):
    """OpenAPI: public routes need no credential (AllowAny adds the empty requirement)."""

    target_class = PublicRouteAuthentication
    name: list = []

    def get_security_requirement(self, auto_schema):
        return None

    def get_security_definition(self, auto_schema):
        return []


class PayloadTooLarge(ApiError):
    status_code = 413
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


class AccountsView(APIView):
    def handle_exception(self, exc):
        # Django raises this while DRF reads an oversized body; it is the client's fault, not a 500.
        if isinstance(exc, RequestDataTooBig):
            exc = PayloadTooLarge()
        return super().handle_exception(exc)


class PublicView(AccountsView):
    authentication_classes = [PublicRouteAuthentication]
    permission_classes = [AllowAny]
