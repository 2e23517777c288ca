"""The OpenAPI document tells the truth: every operation of the document Fleet serves is called
(anonymously, as the owner of a small world, with unknown ids, with a workspace API key), and
every answer's status must be one the operation documents and its JSON body must validate
against the schema documented for that status (jsonschema, after turning OpenAPI 3.0's
`nullable` into JSON Schema). Generic over routes: a route added later is checked the same
way. Plus: every /api route is in the document, and `/api/schema`, `/api/docs` answer without
the trailing slash.
"""

from __future__ import annotations

import re
import uuid
from decimal import Decimal

import jsonschema
import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue
from agents.budgets.services import budget_upsert
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.alerts import make_rule
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from workspaces.roles import Role

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def document(django_db_blocker):
    """The document as /api/schema serves it, generated once for the module (about a second)."""
    with django_db_blocker.unblock():
        return APIClient().get("/api/schema?format=json").json()


def _openapi_to_jsonschema(node, components: dict, seen: tuple = ()):
    """Inline $refs and turn `nullable: true` into a null alternative (OpenAPI 3.0 -> JSON Schema)."""
    if isinstance(node, list):
        return [_openapi_to_jsonschema(item, components, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return {}  # a recursive shape: checked one level deep
        return _openapi_to_jsonschema(components[name], components, (*seen, name))
    converted = {key: _openapi_to_jsonschema(value, components, seen) for key, value in node.items()
                 if key not in ("nullable", "readOnly", "writeOnly", "example", "examples", "discriminator")}
    if node.get("nullable"):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


class World:
    """A workspace its owner calls as; a viewer; a stopped agent without a container shared into
    it, with a budget; an alert rule; an API key of every scope."""

    def __init__(self):
        self.owner = UserFactory()
        self.workspace = WorkspaceFactory(owner=self.owner)
        self.viewer = make_member(self.workspace, Role.VIEWER)
        self.agent = AgentFactory(owner=self.owner, status="stopped", container_id="")
        WorkspaceAgentFactory(workspace=self.workspace, agent=self.agent)
        self.budget, _ = budget_upsert(agent=self.agent, period="daily", limit_usd=Decimal("5"),
                                       soft_threshold_pct=Decimal("80"))
        self.rule = make_rule(workspace=self.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])
        self.key_record, self.key = make_api_key(
            workspace=self.workspace, scopes=["agents:read", "agents:write", "workspaces:read"])

    def ids(self) -> dict[str, str]:
        return {"workspace_id": self.workspace.id, "agent_id": self.agent.id, "rule_id": self.rule.id,
                "budget_id": self.budget.id, "key_id": self.key_record.id, "user_id": self.viewer.id,
                "provider": "nvidia", "path": "notes.txt"}

    def client(self, credential: str) -> APIClient:
        client = APIClient()
        if credential == "session":  # a fresh token each time: logout or a password change ends one
            token = session_token_issue(user=type(self.owner).objects.get(pk=self.owner.pk))
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        elif credential == "key":
            client.credentials(HTTP_X_API_KEY=self.key)
        return client


def _fill(path: str, ids: dict, unknown: bool) -> str:
    def value(match):
        name = match.group(1)
        if unknown or name not in ids:
            return "notes.txt" if name == "path" else ("nvidia" if name == "provider" else str(uuid.uuid4()))
        return str(ids[name])
    return re.sub(r"{(\w+)}", value, path).removeprefix("/api").join(("/api", ""))


def _example(schema: dict, components: dict, depth: int = 0):
    """A small value a schema accepts: its required fields only, enums' first choice."""
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    for combination in ("oneOf", "anyOf", "allOf"):
        if combination in schema:
            return _example(schema[combination][0], components, depth)
    if "enum" in schema:
        return next((value for value in schema["enum"] if value is not None), None)
    kind = schema.get("type", "object")
    if kind == "object":
        if depth > 3:
            return {}
        return {name: _example(schema["properties"][name], components, depth + 1)
                for name in schema.get("required", []) if name in schema.get("properties", {})}
    if kind == "array":
        return [_example(schema.get("items", {}), components, depth + 1)] * schema.get("minItems", 0)
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 1), 1)
    if kind == "boolean":
        return True
    formats = {"email": "new-member@example.com", "uuid": str(uuid.uuid4()), "date": "2026-11-01",
               "date-time": "2026-11-01T00:00:00+00:00", "uri": "https://example.com/"}
    return formats.get(schema.get("format"), "x" * max(schema.get("minLength", 1), 8))


def _request_body(operation: dict, components: dict) -> dict:
    content = (operation.get("requestBody") or {}).get("content", {})
    if "application/json" not in content:
        return {}
    body = _example(content["application/json"]["schema"], components)
    return body if isinstance(body, dict) else {}


def _operations(document: dict) -> list[tuple[str, str, dict]]:
    operations = [(path, method, item[method]) for path, item in document["paths"].items()
                  for method in METHODS if method in item]
    # Deleting comes last (the world must stand for the rest), the most specific paths first, the
    # agent and the workspace themselves at the very end.
    return sorted(operations, key=lambda op: (
        op[1] == "delete", op[0] in ("/api/agents/{agent_id}", "/api/workspaces/{workspace_id}"),
        -op[0].count("/") if op[1] == "delete" else 0, op[0] == "/api/workspaces/{workspace_id}"))


def _problem(document, path, method, operation, response) -> str | None:
    code = str(response.status_code)
    documented = operation["responses"]
    where = f"{method.upper()} {path} -> {code}"
    if code not in documented:
        body = response.content[:200]
        return f"{where}: not documented (documented: {', '.join(documented)}): {body!r}"
    content = documented[code].get("content") or {}
    if "application/json" not in content:
        return None  # a binary download or a redirect: nothing to validate
    if not response.get("Content-Type", "").startswith("application/json"):
        return f"{where}: documented as JSON, answered {response.get('Content-Type')}"
    schema = _openapi_to_jsonschema(content["application/json"]["schema"], document["components"]["schemas"])
    try:
        jsonschema.validate(response.json(), schema)
    except jsonschema.ValidationError as exc:
        return f"{where}: body does not match the documented schema: {exc.message} at {list(exc.absolute_path)}"
    return None


def test_every_answer_of_every_route_is_documented_with_its_body(document, mailoutbox):
    world = World()
    problems, answered = [], {}
    for path, method, operation in _operations(document):
        calls = [("anonymous", False), ("session", False), ("key", False)]
        if "{" in path:
            calls.append(("session", True))
        for credential, unknown in calls:
            url = _fill(path, world.ids(), unknown)
            caller = getattr(world.client(credential), method)
            if method in ("post", "put", "patch"):
                body = _request_body(operation, document["components"]["schemas"]) if credential == "session" else {}
                response = caller(url, body, format="json")
            else:
                response = caller(url)
            answered.setdefault(f"{method.upper()} {path}", set()).add(response.status_code)
            problem = _problem(document, path, method, operation, response)
            if problem:
                problems.append(f"{problem} [{credential}{', unknown ids' if unknown else ''}]")
    assert problems == []
    succeeded = [op for op, codes in answered.items() if any(200 <= c < 400 for c in codes)]
    # 40 of the 84 routes reach a success with a minimal body and the world's ids
    # (the others need a running runtime: their success bodies are pinned by the tests of their
    # app, tests/bodies.py); fewer means the world or the bodies broke, and the check went blind.
    assert len(succeeded) >= 40, sorted(set(answered) - set(succeeded))


def _api_routes(patterns, prefix="") -> set[str]:
    routes = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            routes |= _api_routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            routes.add(prefix + str(pattern.pattern))
    return routes


def test_every_api_route_is_in_the_document(document):
    documented = {re.sub(r"{\w+}", "<>", path) for path in document["paths"]}
    routes = {route for route in _api_routes(get_resolver().url_patterns) if route.startswith("api/")}
    undocumented = []
    for route in routes:
        if "^" in route or "schema" in route or "docs" in route:
            continue  # the JSON 404 catch-all, and the document and its viewer themselves
        shape = "/" + re.sub(r"<[^>]+>", "<>", route)
        if shape not in documented:
            undocumented.append(shape)
    assert undocumented == []


@pytest.mark.parametrize("path", ["/api/schema", "/api/schema/", "/api/docs", "/api/docs/"])
def test_the_document_and_its_viewer_answer_with_and_without_the_slash(client, path):
    response = client.get(path)
    assert response.status_code == 200


def test_deletes_are_documented_with_the_200_they_answer(document):
    deletes = {path: item["delete"]["responses"] for path, item in document["paths"].items() if "delete" in item}
    assert deletes and all("204" not in responses and "200" in responses for responses in deletes.values())


def test_no_operation_is_described_by_a_docstring(document):
    from fleet.api.views import PublicApiView

    descriptions = [op.get("description", "") for item in document["paths"].values()
                    for method, op in item.items() if method in METHODS]
    assert PublicApiView.__doc__.strip() not in descriptions
    assert not any(d.startswith(("GET /api", "`GET")) for d in descriptions)
