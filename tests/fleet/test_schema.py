import re

import pytest
from django.core.management import call_command
from jsonschema import Draft202012Validator
from rest_framework import serializers
from rest_framework.views import APIView

from fleet.api.schema import FleetAutoSchema


def generate_schema(tmp_path, capsys, *flags) -> tuple[str | None, list[str], Exception | None]:
    """(schema YAML, drf-spectacular's unique warning and error lines, the failure if any)."""
    target = tmp_path / "schema.yaml"
    capsys.readouterr()
    failure = None
    try:
        call_command("spectacular", "--validate", "--file", str(target), *flags)
    except Exception as exc:
        failure = exc
    problems = sorted(
        {line for line in capsys.readouterr().err.splitlines() if re.search(r"\b(Warning|Error)\b", line)}
    )
    return (target.read_text() if target.exists() else None), problems, failure


def test_the_schema_is_valid_openapi_and_describes_the_kernel_routes(tmp_path, capsys):
    schema, problems, failure = generate_schema(tmp_path, capsys)

    assert failure is None

    assert "/api/health:" in schema
    assert "sessionBearer" in schema and "workspaceApiKey" in schema
    kernel_problems = [p for p in problems if "/fleet/" in p or "FleetAuthentication" in p]
    assert kernel_problems == []


def test_every_route_describes_its_request_and_response_bodies(tmp_path, capsys):
    # The contract of issue 2: the schema covers every route with its bodies. A view that
    # drf-spectacular cannot describe needs @extend_schema(request=..., responses=...).
    _, problems, failure = generate_schema(tmp_path, capsys, "--fail-on-warn")
    if failure is not None:
        pytest.fail(f"{failure}:\n" + "\n".join(problems), pytrace=False)


def free_form(schema: dict, components: dict) -> bool:
    """Whether a response schema says nothing of its fields: an object without properties
    (drf-spectacular's `responses=dict`) or no schema, looked through $ref, arrays and
    combinations."""
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    if schema.get("type") == "array":
        return free_form(schema.get("items", {}), components)
    if "allOf" in schema:
        return all(free_form(part, components) for part in schema["allOf"])
    for combination in ("oneOf", "anyOf"):
        if combination in schema:
            return any(free_form(part, components) for part in schema[combination])
    return schema.get("type", "object") == "object" and not schema.get("properties")


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "object", "additionalProperties": {}}, True),
    ({}, True),
    ({"type": "array", "items": {"type": "object"}}, True),
    ({"$ref": "#/components/schemas/Typed"}, False),
    ({"type": "array", "items": {"$ref": "#/components/schemas/Typed"}}, False),
    ({"oneOf": [{"$ref": "#/components/schemas/Typed"}, {"type": "object"}]}, True),
    ({"type": "string"}, False),
])
def test_free_form_tells_untyped_schemas(schema, expected):
    assert free_form(schema, {"Typed": {"type": "object", "properties": {"a": {"type": "string"}}}}) is expected


def binary_download(content: dict) -> bool:
    """A file download (the agent export): one non-JSON media type typed as binary."""
    return len(content) == 1 and all(
        media != "application/json" and body.get("schema") == {"type": "string", "format": "binary"}
        for media, body in content.items()
    )


def event_stream(content: dict) -> bool:
    """A stream of server-sent events (a chat turn): its events are described in prose."""
    schema = content.get("text/event-stream", {}).get("schema", {})
    return list(content) == ["text/event-stream"] and schema.get("type") == "string"


def test_every_success_response_of_every_operation_is_typed(client, db):
    # One definition per response shape, and the document types every route.
    document = client.get("/api/schema/?format=json").json()
    components = document["components"]["schemas"]
    untyped = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            successes = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
            if not successes:
                untyped.append(f"{method.upper()} {path}: no 2xx response")
            for code, response in successes.items():
                content = response.get("content", {})
                if binary_download(content) or event_stream(content):
                    continue
                schema = content.get("application/json", {}).get("schema")
                if schema is None or free_form(schema, components):
                    untyped.append(f"{method.upper()} {path} {code}")
    assert untyped == []


class FirstApi(APIView):
    class InputSerializer(serializers.Serializer):
        a = serializers.CharField()


class SecondApi(APIView):
    class InputSerializer(serializers.Serializer):
        b = serializers.IntegerField()


def test_nested_input_serializers_of_different_views_get_distinct_component_names():
    schema = FleetAutoSchema()
    names = [schema.get_serializer_name(view.InputSerializer(), "request") for view in (FirstApi, SecondApi)]
    assert names == ["FirstApiInputSerializer", "SecondApiInputSerializer"]


def test_every_operation_id_is_unique(client, db):
    operations = client.get("/api/schema/?format=json").json()["paths"].values()
    ids = [
        op["operationId"]
        for methods in operations
        for op in methods.values()
        if isinstance(op, dict) and "operationId" in op
    ]
    assert len(ids) == len(set(ids))
    assert "agents_retrieve" not in ids  # the path-based id that list and detail views shared


def test_every_operation_says_what_it_does_in_a_summary(client, db):
    paths = client.get("/api/schema/?format=json").json()["paths"]
    missing = [f"{method.upper()} {path}" for path, methods in paths.items() for method, op in methods.items()
               if isinstance(op, dict) and "operationId" in op and not op.get("summary")]
    # The handler's docstring is its summary (fleet.api.schema.FleetAutoSchema.get_summary).
    assert missing == []


def _json_bodies(document: dict):
    """(operation, media type object) of every JSON request body."""
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            content = (op.get("requestBody") or {}).get("content", {}) if isinstance(op, dict) else {}
            if "application/json" in content:
                yield f"{method.upper()} {path}", content["application/json"]


def test_every_json_request_body_has_an_example_its_schema_accepts(client, db):
    document = client.get("/api/schema/?format=json").json()
    bodies = list(_json_bodies(document))
    missing = [operation for operation, body in bodies if not body.get("examples")]
    assert missing == []
    refused = []
    for operation, body in bodies:
        # The body's schema, with the document's components to resolve its $refs.
        schema = {**body["schema"], "components": document["components"]}
        for title, example in body["examples"].items():
            errors = list(Draft202012Validator(schema).iter_errors(example["value"]))
            refused += [f"{operation} {title!r}: {error.message}" for error in errors]
    assert len(bodies) >= 40
    assert refused == []


def test_the_schema_is_served_as_openapi_3(client, db):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert "get" in schema["paths"]["/api/health"]
    assert schema["paths"]["/api/health"]["get"]["operationId"] == "health"


def test_the_docs_page_is_served(client, db):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
