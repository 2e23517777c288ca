"""One row for each API request that may change something (POST, PUT, PATCH, DELETE), written by
`fleet.api.views.ApiView` inside the transaction that wraps the request, once its final answer
is known (after the exception handler made an error its body).

What the row says comes from the route, so no view has to remember it:
- action: the URL pattern's name, dotted. A collection (`*-list`) or item (`*-detail`) route adds
  the method's verb (`agent.update`, `workspace-api-key.create`); another route is its own action
  (`agent.start`, `auth.login`), with `.update`/`.delete` for PUT/PATCH/DELETE.
- target: an item route's resource and its last path id; a create's new id from its 201 body;
  another route's last path id, typed by its name (`agent_id` -> `agent`).
- result: "ok" for a 2xx, else the error body's `code`.
- detail: the request body's top-level field names (values never leave the request).
"""

from __future__ import annotations

from uuid import UUID

from .actors import Actor, actor_of, client_ip
from .models import OK, Source
from .services import audit_record, field_names

VERBS = {"POST": "create", "PUT": "update", "PATCH": "update", "DELETE": "delete"}
COLLECTION, ITEM = "-list", "-detail"


def route_action(url_name: str, method: str) -> tuple[str, str]:
    """(action, target type) of a route: see the module's docstring."""
    for suffix in (COLLECTION, ITEM):
        if url_name.endswith(suffix):
            resource = url_name.removesuffix(suffix)
            return f"{resource.replace('-', '.')}.{VERBS[method]}", resource
    action = url_name.replace("-", ".")
    return (action if method == "POST" else f"{action}.{VERBS[method]}"), ""


def _last_path_id(kwargs: dict) -> tuple[str, str]:
    """(its name without `_id`, its value) of the last path parameter; ("", "") for none."""
    for name, value in reversed(list(kwargs.items())):
        return name.removesuffix("_id"), str(value)
    return "", ""


def _result(response) -> str:
    if 200 <= response.status_code < 300:
        return OK
    data = getattr(response, "data", None)
    code = data.get("code") if isinstance(data, dict) else None
    return str(code) if code else f"http_{response.status_code}"


def _created_id(response) -> str:
    data = getattr(response, "data", None)
    if response.status_code == 201 and isinstance(data, dict) and data.get("id") is not None:
        return str(data["id"])
    return ""


def _workspace_of(kwargs: dict) -> UUID | None:
    value = kwargs.get("workspace_id")
    return value if isinstance(value, UUID) else None


def _body_names(request) -> list[str]:
    try:
        return field_names(request.data)
    except Exception:  # an unparsable body: the route already answered 400; its names are unknown
        return []


def _tried(request) -> str:
    """The e-mail a sign-in or sign-up named, for a caller not signed in (a refused login)."""
    try:
        email = request.data.get("email") if isinstance(request.data, dict) else None
    except Exception:
        return ""
    return email.strip()[:254] if isinstance(email, str) else ""


def _api_actor(request) -> Actor:
    """The caller DRF authenticated, if it got that far (a request refused before it has none:
    the console's cookie on the Django request is not an API credential)."""
    state = request.__dict__
    return actor_of(state.get("_user"), state.get("_auth"), client_ip(request._request), _tried(request))


def record_api_write(request, view, response, path_workspaces: frozenset[UUID]) -> None:
    """The row of one unsafe API request (called by ApiView inside the request's transaction);
    `path_workspaces`: those of the path's targets, read before the change (scopes.py)."""
    match = request.resolver_match
    url_name = (match.url_name if match else "") or type(view).__name__
    kwargs = dict(getattr(view, "kwargs", None) or {})
    action, target_type = route_action(url_name, request.method)
    path_type, path_id = _last_path_id(kwargs)
    if target_type:
        target_id = path_id if url_name.endswith(ITEM) else _created_id(response)
    else:
        target_type, target_id = path_type, path_id
    audit_record(
        action=action, source=Source.API, actor=_api_actor(request),
        result=_result(response), target_type=target_type, target_id=target_id,
        workspace_id=_workspace_of(kwargs), detail=_body_names(request), workspace_ids=path_workspaces,
    )


def record_api_read(request, *, action: str, target_type: str, target_id: object,
                    workspace_id: UUID | None = None) -> None:
    """A read worth a row of its own (an agent's export: its state leaves Fleet), from its view."""
    audit_record(action=action, source=Source.API, actor=_api_actor(request), target_type=target_type,
                 target_id=target_id, workspace_id=workspace_id)
