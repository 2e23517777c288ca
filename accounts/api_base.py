"""Plumbing of the public auth views: credentials are read but never verified."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from fleet.api.authentication import read_credential
from fleet.errors import InvalidCredentials


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


class PublicView(APIView):
    authentication_classes = [PublicRouteAuthentication]
    permission_classes = [AllowAny]
