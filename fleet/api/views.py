"""The base of every API view: each route states who may call each of its methods.

`access` maps an HTTP method to the permission classes that guard it. A view whose class
implements a method without declaring its access is refused when the class is defined (deny
unless declared), so a new route cannot ship open by omission. HEAD, OPTIONS and methods the
route does not have are checked as its reading method: every method goes through the same
checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.views import APIView

from fleet.errors import InvalidCredentials

from .authentication import read_credential
from .parsers import check_query
from .permissions import DenyAll, principal_of
from .principal import Principal
from .writes import UNSAFE_METHODS, write_recorder

Access = Sequence[type[BasePermission]]
PUBLIC: Access = (AllowAny,)


class ApiView(APIView):
    access: Mapping[str, Access] = {}
    # Error statuses a route answers beyond the ones every route of its kind has (400, 401/403
    # unless public, 404 with path parameters, 413/415 with a body, 429 when throttled), for the
    # OpenAPI document (fleet.api.schema): (409, 502), or per method {"POST": (409,)}.
    documented_errors: tuple[int, ...] | Mapping[str, tuple[int, ...]] = ()
    # Request bodies shown in the OpenAPI document, per method: {"POST": {"A title": {...}}}.
    request_examples: Mapping[str, Mapping[str, object]] = {}
    # Top-level body fields whose control characters the route's input drops (names, as the
    # contract says): the input layer lets a NUL through to them. Taken from the fields of the
    # view's InputSerializer that say so (fleet.api.fields.StrippedNameField).
    control_stripped_fields: tuple[str, ...] = ()
    # A write and its record are one transaction (fleet.api.writes, docs/audit.md). False only for
    # a route that streams or waits on a runtime (a chat turn, a pairing wait) or takes a
    # provider's inbound traffic: it holds no transaction open while it waits, and writes no row.
    audited: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        declared = getattr(getattr(cls, "InputSerializer", None), "_declared_fields", {})
        cls.control_stripped_fields = tuple(
            name for name, field in declared.items() if getattr(field, "strips_controls", False))
        handled = {
            name.upper() for name in cls.http_method_names
            if name not in ("head", "options") and callable(getattr(cls, name, None))
        }
        undeclared = handled - set(cls.access)
        if undeclared:
            raise ImproperlyConfigured(f"{cls.__qualname__} declares no access for {', '.join(sorted(undeclared))}.")

    def dispatch(self, request, *args, **kwargs):
        registered = write_recorder()
        if registered is None or not self.audited or request.method not in UNSAFE_METHODS:
            return super().dispatch(request, *args, **kwargs)
        recorder, before = registered
        # The answer is final here (errors already made their body); a failure to record it
        # undoes the change, and an unhandled error undoes both (the 500 of ApiErrorMiddleware).
        try:
            with transaction.atomic():
                read_before = before(kwargs)
                response = super().dispatch(request, *args, **kwargs)
                recorder(self.request, self, response, read_before)
        except Exception as exc:
            # Raised by the recorder (nothing committed), or by an on_commit callback after the
            # commit (a broker refusing a task: the change and its row stand, and the reconciler
            # publishes it): either way answered as a view's error is (503 broker_unavailable).
            response = self.finalize_response(self.request, self.handle_exception(exc), *args, **kwargs)
        return response

    def initial(self, request, *args, **kwargs):
        check_query(request)  # the query-string half of the input layer (fleet.api.parsers)
        super().initial(request, *args, **kwargs)

    def get_permissions(self):
        return [permission() for permission in self.access_of(self.request.method)]

    @classmethod
    def access_of(cls, method: str) -> Access:
        """The checks of `method`. HEAD, OPTIONS and methods the route lacks are checked as its
        reading method (GET, else the first declared): the same checks as the route, then 405."""
        declared = cls.access.get(method)
        if declared is not None:
            return declared
        reading = "GET" if "GET" in cls.access else next(iter(cls.access), None)
        return cls.access[reading] if reading else (DenyAll,)

    @property
    def principal(self) -> Principal:
        """Who is calling (the acting user is `self.principal.user`)."""
        return principal_of(self.request)


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
        return


class PublicRouteSchema(OpenApiAuthenticationExtension):
    """OpenAPI: public routes need no credential."""

    target_class = PublicRouteAuthentication
    name: list = []

    def get_security_requirement(self, auto_schema):
        return None

    def get_security_definition(self, auto_schema):
        return []


class PublicApiView(ApiView):
    """A route anyone may call; its methods declare `PUBLIC` access."""

    authentication_classes = [PublicRouteAuthentication]
