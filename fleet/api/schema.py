"""OpenAPI plumbing for drf-spectacular, shared by every app.

- FleetAutoSchema (settings DEFAULT_SCHEMA_CLASS) names components and operations so the
  styleguide's habits do not collide: a nested `LoginApi.InputSerializer` becomes the
  component "LoginApiInput" (not a shared "Input"), and a plain APIView's operationId
  comes from its class and method ("agent_list_get", "agent_detail_get") rather than
  from the path, where list and detail views would both be "agents_retrieve". Explicit
  `extend_schema(operation_id=...)`, `component_name` and `Meta.ref_name` still win.
- FleetAuthenticationScheme documents FleetAuthentication (imported from
  FleetConfig.ready()): any one of a Bearer JWT, the service_auth cookie, or a workspace
  API key in X-Api-Key / X-Service-Api-Key.
"""

import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from .authentication import SESSION_COOKIE


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
