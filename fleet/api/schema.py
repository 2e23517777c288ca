"""OpenAPI plumbing for drf-spectacular, shared by every app.

- FleetAutoSchema (settings DEFAULT_SCHEMA_CLASS) names components and operations so the
  styleguide's habits do not collide: a nested `LoginApi.InputSerializer` becomes the
  component "LoginApiInput" (not a shared "Input"), and a plain APIView's operationId
  comes from its class and method ("agent_list_get", "agent_detail_get") rather than
  from the path, where list and detail views would both be "agents_retrieve". Explicit
  `extend_schema(operation_id=...)`, `component_name` and `Meta.ref_name` still win.
- The document says what routes answer: no view docstring becomes an operation's description
  (they are written for developers; `extend_schema(description=...)` is the way to describe an
  operation), a DELETE documented with one body answers it with 200 (Fleet's DELETEs answer
  `{success}`), and every operation lists the error statuses it can answer with the one error
  body (`ErrorOut`): 400 always (a conflicting credential, a malformed query), 401 and 403 unless
  public, 404 with path parameters, 413 and 415 with a request body, 429 when throttled; a view
  adds its own (402, 409, 502, ...) as `documented_errors = (409, 502)` (or per method,
  `{"POST": (409,)}`).
  tests/fleet/test_schema_truth.py drives every route and checks the answers against this.
- FleetAuthenticationScheme documents FleetAuthentication (imported from
  FleetConfig.ready()): any one of a Bearer JWT, the service_auth cookie, or a workspace
  API key in X-Api-Key / X-Service-Api-Key.
"""

import inspect
import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import is_serializer
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework.permissions import AllowAny

from .authentication import SESSION_COOKIE
from .error_docs import ERROR_RESPONSES, ErrorOut


class FleetAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "fleet.api.authentication.FleetAuthentication"
    match_subclasses = True
    name = ["sessionBearer", "sessionCookie", "workspaceApiKey", "workspaceServiceApiKey"]

    def get_security_requirement(self, auto_schema):
        return [{name: []} for name in self.name]  # any one of them, not all together

    def get_security_definition(self, auto_schema):
        return [
            {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            {"type": "apiKey", "in": "cookie", "name": SESSION_COOKIE},
            {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            {"type": "apiKey", "in": "header", "name": "X-Service-Api-Key"},
        ]


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


class FleetAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer, direction):
        parts = serializer.__class__.__qualname__.split(".")
        if len(parts) > 1 and "<locals>" not in parts:
            return "".join(p.removesuffix("Serializer") for p in parts[:-1]) + parts[-1]
        return super().get_serializer_name(serializer, direction)

    def get_operation_id(self):
        if hasattr(self.view, "action"):  # viewsets: the action already tells list from retrieve
            return super().get_operation_id()
        name = re.sub(r"(APIView|Api|View)$", "", type(self.view).__name__) or type(self.view).__name__
        return f"{_CAMEL_BOUNDARY.sub('_', name).lower()}_{self.method.lower()}"

    def get_examples(self):
        """The view's own request examples (`request_examples = {"POST": {"A title": body}}`, as
        `documented_errors` declares its errors), beside those of an extend_schema."""
        own = getattr(self.view, "request_examples", {}).get(self.method, {})
        return [*super().get_examples(),
                *(OpenApiExample(title, value=body, request_only=True) for title, body in own.items())]

    def get_description(self):
        return ""  # only an explicit extend_schema(description=...) describes an operation

    def get_summary(self):
        """An explicit extend_schema(summary=...) wins (drf-spectacular applies it over this);
        else the first paragraph of the handler's docstring: the route's one-line statement."""
        handler = getattr(self.view, self.method.lower(), None)
        doc = inspect.getdoc(handler) if handler is not None else None
        return " ".join(doc.split("\n\n", 1)[0].split()) if doc else None

    def _get_response_bodies(self, direction="response"):
        serializers = self.get_response_serializers()
        if self.method == "DELETE" and (is_serializer(serializers) or isinstance(serializers, OpenApiResponse)):
            bodies = {"200": self._get_response_for_code(serializers, "200", direction=direction)}
        else:
            bodies = super()._get_response_bodies(direction)
        for code in self._error_statuses():
            if code not in bodies:
                bodies[code] = self._get_response_for_code(ERROR_RESPONSES[code], code, direction=direction)
        return dict(sorted(bodies.items()))

    def _error_statuses(self) -> list[str]:
        """The error statuses every route of this kind can answer (see the module docstring)."""
        codes = ["400"]
        access = getattr(self.view, "access_of", None)
        public = access is not None and tuple(access(self.method)) == (AllowAny,)
        if access is not None and not public:
            codes += ["401", "403"]
        if re.search(r"{\w+}", self.path):
            codes.append("404")
        if self.method in ("POST", "PUT", "PATCH"):
            codes += ["413", "415"]
        if getattr(self.view, "throttle_classes", None):
            codes.append("429")
        own = getattr(self.view, "documented_errors", ())
        if isinstance(own, dict):
            own = own.get(self.method, ())
        codes += [str(code) for code in own]
        return sorted(set(codes))


__all__ = ["ErrorOut", "FleetAutoSchema", "OpenApiExample"]
