"""The errors services, selectors and commands raise: a readable sentence and a snake_case code.

No HTTP here. Each class belongs to one family (invalid request, not found, conflict, upstream
failure...); `fleet.api.errors` maps the families to HTTP statuses in one table, the admin shows
the sentence, a management command prints it. An app adds its own errors by subclassing the
family they belong to (`class GatewayUnreachable(UpstreamFailure)`), never by choosing a status.
"""

from __future__ import annotations


class FleetError(Exception):
    """Base of every domain error. `code` names the case for machines, the message for people."""

    code = "error"
    default_message = "The request could not be processed."

    def __init__(self, message: str | None = None, *, code: str | None = None):
        self.message = message or self.default_message
        if code is not None:
            self.code = code
        super().__init__(self.message)


# -- 400: the request itself is wrong -----------------------------------------------------------


class InvalidRequest(FleetError):
    code = "bad_request"


class ValidationFailed(InvalidRequest):
    """Bad input that names its fields: {"field": ["message", ...]}."""

    code = "validation_error"
    default_message = "Invalid input."

    def __init__(self, fields: dict[str, list[str] | str], message: str | None = None):
        self.fields = {name: v if isinstance(v, list) else [v] for name, v in fields.items()}
        super().__init__(message or first_field_message(self.fields))


class InvalidState(InvalidRequest):
    code = "invalid_state"
    default_message = "The agent is not in a state that allows this action."


class NoContainer(InvalidRequest):
    """An action (start, restart) needs a container the agent does not have."""

    code = "no_container"
    default_message = "The agent has no container; redeploy it first."


class ConflictingAuth(InvalidRequest):
    code = "conflicting_auth"
    default_message = "Send one credential: conflicting explicit credentials were given."


# -- 401: who is calling is unknown ------------------------------------------------------------


class Unauthenticated(FleetError):
    code = "not_authenticated"
    default_message = "Authentication credentials were not provided."


class NotAuthenticated(Unauthenticated):
    pass


class InvalidCredentials(Unauthenticated):
    code = "invalid_credentials"
    default_message = "The credential is invalid or has expired."


# -- 402 ------------------------------------------------------------------------------------


class BillingLimit(FleetError):
    code = "billing_limit"
    default_message = "Your plan's agent limit has been reached."


# -- 403: known, but not allowed ----------------------------------------------------------------


class Forbidden(FleetError):
    code = "permission_denied"
    default_message = "You do not have permission to perform this action."


class MissingScope(Forbidden):
    code = "missing_scope"
    default_message = "The API key lacks the scope this route needs."


class WrongWorkspace(Forbidden):
    code = "wrong_workspace"
    default_message = "The API key is bound to another workspace."


class SessionRequired(Forbidden):
    code = "session_required"
    default_message = "This route needs a signed-in session; workspace API keys are refused."


class SignupDisabled(Forbidden):
    code = "SIGNUP_DISABLED"
    default_message = "Registration is disabled."


# -- 404 --------------------------------------------------------------------------------------


class NotFound(FleetError):
    code = "not_found"
    default_message = "Not found."


# -- 409: the request is fine, the state of things is not ----------------------------------------


class Conflict(FleetError):
    code = "conflict"
    default_message = "The request conflicts with the current state."


class NoContainerToInspect(Conflict):
    """A read of the workload (stats, gateway URL) finds no container to read."""

    code = "no_container"
    default_message = "The agent has no container; redeploy it first."


class RuntimeManaged(Conflict):
    code = "runtime_managed"
    default_message = "This channel is managed by the runtime; the route is for legacy channels only."


# -- 413 --------------------------------------------------------------------------------------


class PayloadTooLarge(FleetError):
    code = "payload_too_large"
    default_message = "The request body is too large."


# -- 429 ----------------------------------------------------------------------------------------


class TooManyRequests(FleetError):
    code = "rate_limited"
    default_message = "Too many requests; try again later."


class TooManyStreams(TooManyRequests):
    """A caller holds as many live streams (followed logs, chat turns, terminals) as it may, or
    this server process holds as many as it may."""

    code = "too_many_streams"
    default_message = "Too many live streams are open; close one and try again."


# -- 502: something Fleet depends on failed -------------------------------------------------------


class UpstreamFailure(FleetError):
    code = "upstream_failure"
    default_message = "A service Fleet depends on failed to answer."


class DaemonUnreachable(UpstreamFailure):
    code = "daemon_unreachable"
    default_message = "The container daemon could not be reached."


# -- 503: a service Fleet needs is away for now; the same request may succeed later -------------


class Unavailable(FleetError):
    code = "unavailable"
    default_message = "The service is unavailable; try again shortly."


class BrokerUnavailable(Unavailable):
    """The task broker refused a job; what the request stored is kept and picked up later."""

    code = "broker_unavailable"
    default_message = "The task broker could not be reached; try again shortly."


class CacheUnavailable(Unavailable):
    """The cache (rate limits, locks) could not be reached."""

    code = "cache_unavailable"
    default_message = "The cache could not be reached; try again shortly."


class DatabaseUnavailable(Unavailable):
    """The database could not be reached, or dropped the connection (a restart, a failover)."""

    code = "database_unavailable"
    default_message = "The database could not be reached; try again shortly."


class FieldErrors:
    """The field errors of several independent checks of one body, answered together: a body
    with two bad fields names both, not the first one a check happened to reach."""

    def __init__(self, fields: dict[str, list[str]] | None = None):
        self.fields: dict[str, list[str]] = dict(fields or {})

    def check(self, call, *, fallback=None):
        """call()'s value, or `fallback` with its ValidationFailed fields kept (a field already
        refused keeps its first reason)."""
        try:
            return call()
        except ValidationFailed as exc:
            for name, messages in exc.fields.items():
                self.fields.setdefault(name, messages)
            return fallback

    def raise_any(self) -> None:
        if self.fields:
            raise ValidationFailed(self.fields)


def first_field_message(fields: dict[str, list[str]]) -> str:
    """The sentence a validation error leads with: its first field's first message."""
    for name, messages in fields.items():
        if messages:
            return f"{name}: {messages[0]}" if name != "non_field_errors" else str(messages[0])
    return ValidationFailed.default_message
