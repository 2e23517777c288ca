"""Admitting one call: who calls, may it, where it goes, and its worst case reserved against
every budget of the agent. Runs in Django's thread (fleet.edge.django_thread), before a byte
goes to the provider.

In order: the agent by its token (401), its routing and status (403), its model (409), the body
(400), the model allowlist (403), the format its key's provider speaks (400), calls and tokens
per minute (429), then the budgets (402). The reservation is the call's worst case (calls.py),
reserved under a lock on the agent's budgets (reservations.py), so concurrent calls cannot
together cross a cap. The agent is read in one statement compiled once per process: this runs
before every call; for a token whose last call this process reserved for, in the round trip
that reserves (ahead.py).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime

import orjson
from django.core.cache import cache
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from agents.budgets.selectors import budget_states
from agents.events import agent_event
from agents.gateway.tokens import usage_token_digest
from agents.llm_model.choice import ModelChoice, default_choice
from agents.llm_model.runtime import OPENAI_COMPATIBLE_PATH
from agents.models import IN_FLIGHT, SERVING, Agent, Budget, ModelRouting
from agents.models.money import micros_to_usd
from fleet.api.throttling import CACHE_AWAY
from fleet.compiled_query import CompiledRows
from fleet.errors import InvalidCredentials
from llm import providers
from llm.models import ProviderKey
from llm.selectors import base_url_of

from . import allowances, limits
from .ahead import Ahead, forget, release, remember, reserve_ahead
from .calls import call_body, output_bound, worst_case_micros
from .errors import (
    AgentNotServing,
    BudgetWouldExceed,
    GatewayNotEnabled,
    ModelNotAllowed,
    NoModel,
    UnsupportedFormat,
)
from .models import GatewayLimits
from .reservations import Shortfall, reserve
from .traffic import traffic_count
from .wire import Route

logger = logging.getLogger(__name__)

# Request headers a provider reads that the gateway passes on (the rest, credentials included, stay).
PASSED_HEADERS = ("anthropic-version", "anthropic-beta", "openai-beta")


@dataclass(frozen=True)
class Admission:
    """A call Fleet will send: where, with what, and what it reserved. Holds the provider key:
    it lives in this process's memory only, for the one call."""

    request_id: uuid.UUID
    agent_id: uuid.UUID
    provider: str
    model: str
    url: str
    headers: dict = field(repr=False)  # the provider key: never in a repr, a log line or a traceback
    body: bytes = field(repr=False)
    reserved_micros: int
    listed_models: tuple[str, ...] | None = None  # a listing answered by Fleet: the agent's allowlist
    counts_tokens: bool = False  # the agent has a tokens-per-minute limit: settling counts its tokens
    allowance_id: uuid.UUID | None = None  # reserved against this allowance (allowances.py), not on its own


@dataclass(frozen=True)
class Caller:
    """The agent a token belongs to, as admission reads it: one row, no model instance of the agent."""

    agent_id: uuid.UUID
    status: str
    model_routing: str
    choice: ModelChoice | None  # its own model, else the platform default
    rules: GatewayLimits | None
    budgets_changed_at: datetime | None  # the latest change of its budgets (None: it has none)

    @property
    def has_budgets(self) -> bool:
        return self.budgets_changed_at is not None


_CALLER_COLUMNS = (
    "pk", "status", "model_routing", "llm_model__name", "llm_model__fallbacks", "llm_model__key__pk",
    "llm_model__key__provider", "llm_model__key__base_url", "llm_model__key__api_key",
    "model_gateway_limits__pk", "model_gateway_limits__requests_per_minute",
    "model_gateway_limits__tokens_per_minute", "model_gateway_limits__allowed_models", "budgets_changed_at",
)
# Taken on every call: compiled once per process (fleet.compiled_query), one statement.
_caller_rows = CompiledRows(lambda digest: Agent.objects.filter(usage_token_digest=digest)
                            .annotate(budgets_changed_at=Subquery(Budget.objects.filter(agent_id=OuterRef("pk"))
                                                                  .order_by("-updated_at").values("updated_at")[:1]))
                            .values_list(*_CALLER_COLUMNS), str)


def _read_caller(route: Route, digest: str, raw_body: bytes) -> tuple[Ahead | None, list[tuple]]:
    """The rows of the agent whose own token has this digest (indexed), and the call reserved
    ahead with them when this process remembers the token (ahead.py)."""
    if not digest:
        return None, []
    made = reserve_ahead(route, digest, raw_body, _caller_rows.statement(digest))
    if made is None:
        return None, _caller_rows.rows(digest)
    ahead, rows = made
    return ahead, _caller_rows.converted(rows)


def _caller(rows: list[tuple]) -> Caller:
    """The agent of `_read_caller`'s rows, with its model, key, limits and whether it has
    budgets; 401 when there are none (any other token)."""
    if not rows:
        raise InvalidCredentials("The agent token is invalid.")
    (agent_id, status, routing, model, fallbacks, key_id, provider, base_url, api_key,
     limits_id, per_minute, tokens_per_minute, allowed, budgets_changed_at) = rows[0]
    if model is None:
        choice = default_choice()
    else:
        key = ProviderKey(id=key_id, provider=provider, base_url=base_url, api_key=api_key)
        choice = ModelChoice(key=key, name=model, fallbacks=tuple(fallbacks or ()))
    rules = None if limits_id is None else GatewayLimits(
        agent_id=agent_id, requests_per_minute=per_minute, tokens_per_minute=tokens_per_minute,
        allowed_models=allowed or [])
    return Caller(agent_id, status, routing, choice, rules, budgets_changed_at)


def _routed(caller: Caller) -> Caller:
    if caller.model_routing != ModelRouting.GATEWAY:
        raise GatewayNotEnabled()
    if caller.status not in (*SERVING, *IN_FLIGHT):
        raise AgentNotServing(f"The agent is {caller.status}.")
    return caller


def upstream_url(route: Route, key) -> str:
    """The provider's URL for `route` with `key` (OpenAI formats at its OpenAI-compatible API)."""
    kind = providers.require(key.provider)["kind"]
    if kind not in route.kinds:
        raise UnsupportedFormat(f"The agent's provider ({key.provider}) does not serve {route.path}.")
    base = base_url_of(key).rstrip("/")
    if not base:
        raise NoModel("The agent's provider key has no base URL.")
    if route.wire == "openai":
        base += OPENAI_COMPATIBLE_PATH[kind]
    return base + route.upstream


def _headers(key, sent: dict) -> dict:
    entry = providers.require(key.provider)
    headers = {name: sent[name] for name in PASSED_HEADERS if name in sent}
    # The provider's own headers for the key win over what the caller sent (anthropic-version).
    headers.update(providers.auth_headers(entry, key.api_key))
    headers.update({"content-type": "application/json", "accept-encoding": "identity"})
    return headers


def admit(*, route: Route, token: str, raw_body: bytes, sent_headers: dict) -> Admission:
    """Check and reserve one call (module docstring); refusals are Fleet errors, counted in the
    agent's traffic once the agent is known. A call of a token whose last call this process
    reserved for is reserved in the round trip that reads its caller (ahead.py)."""
    digest = usage_token_digest(token) if token else ""
    ahead, rows = _read_caller(route, digest, raw_body)
    admission = None
    try:
        caller = _routed(_caller(rows))
        try:
            admission = _admit(caller, route, raw_body, sent_headers, digest, ahead)
        except Exception as exc:
            traffic_count(agent_id=caller.agent_id, outcome=getattr(exc, "code", "error"))
            raise
    finally:
        # The reservation made ahead goes unless the call admitted is the one it was made for.
        if ahead is not None and (admission is None or admission.request_id != ahead.request_id):
            release(ahead)
    return admission


def _admit(caller: Caller, route: Route, raw_body: bytes, sent_headers: dict, digest: str,
           ahead: Ahead | None) -> Admission:
    choice, rules = caller.choice, caller.rules
    if choice is None:
        raise NoModel()
    url = upstream_url(route, choice.key)
    if not route.carries_a_call:
        listed = tuple(rules.allowed_models) if rules is not None and rules.allowed_models else None
        return Admission(uuid.uuid4(), caller.agent_id, choice.key.provider, "", url,
                         _headers(choice.key, sent_headers), b"", 0, listed_models=listed)
    body = call_body(raw_body)
    model = body["model"]
    if rules is not None and rules.allowed_models and model not in rules.allowed_models:
        raise ModelNotAllowed(f"This agent may call only: {', '.join(rules.allowed_models)}.")
    bound = output_bound(route, body)
    if body.get("stream") is True and route.path == "/chat/completions":
        # The provider's own figures, in the stream's last chunk.
        body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
    if rules is not None and rules.requests_per_minute is not None:
        limits.calls_take(caller.agent_id, rules.requests_per_minute)
    if rules is not None and rules.tokens_per_minute is not None:
        limits.tokens_check(caller.agent_id, rules.tokens_per_minute)
    request_id, reserved, allowance_id = _reserve(caller, digest, ahead, model=model, provider=choice.key.provider,
                                                  input_bound=len(raw_body), output_bound=bound)
    return Admission(request_id, caller.agent_id, choice.key.provider, model, url, _headers(choice.key, sent_headers),
                     orjson.dumps(body), reserved,
                     counts_tokens=rules is not None and rules.tokens_per_minute is not None, allowance_id=allowance_id)


def model_list(admission: Admission) -> dict:
    """GET /llm/v1/models for an agent with an allowlist: those models, in OpenAI's shape."""
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": admission.provider}
                                       for name in admission.listed_models or ()]}


def _reserve(caller: Caller, digest: str, ahead: Ahead | None, *, model: str, provider: str, input_bound: int,
             output_bound: int) -> tuple[uuid.UUID, int, uuid.UUID | None]:
    """The call's request id, the micros reserved for it and the allowance they were taken of
    (None: reserved on its own: the reservation made ahead when it is the one this call needs,
    else a new one; admit releases the other); BudgetWouldExceed when it would cross a cap."""
    worst = worst_case_micros(model=model, provider=provider, input_bound=input_bound, output_bound=output_bound)
    if not caller.has_budgets or not worst:
        # No cap to keep (a budget set after the agent was read counts from the next call).
        if not caller.has_budgets:
            forget(digest)
        return uuid.uuid4(), 0, None
    remember(digest, caller.agent_id, provider)
    allowance_id = allowances.take(caller.agent_id, caller.budgets_changed_at, worst)
    if allowance_id is not None:
        return uuid.uuid4(), worst, allowance_id
    now = timezone.now()
    if ahead is not None and ahead.confirms(agent_id=caller.agent_id, provider=provider, worst_micros=worst):
        request_id, reserved = ahead.request_id, ahead.result
    else:
        request_id = uuid.uuid4()
        reserved = reserve(agent_id=caller.agent_id, request_id=request_id, worst_micros=worst, now=now)
    if isinstance(reserved, Shortfall) and allowances.give_back(caller.agent_id):
        # This process's allowance may have held the room: it went back, the call is tried again.
        request_id = uuid.uuid4()
        reserved = reserve(agent_id=caller.agent_id, request_id=request_id, worst_micros=worst, now=now)
    if not isinstance(reserved, Shortfall):
        allowances.want(caller.agent_id, worst)
        return request_id, reserved, None
    # Outside the reservation's transaction: the event is kept, though the call is refused.
    state = next(s for s in budget_states(now=now, agent_ids=[caller.agent_id], with_agent=True)
                 if s.budget.pk == reserved.budget_id)
    _refusal_event(state.budget.agent, state, worst)
    left = max(0, state.budget.limit_micros - reserved.spent_micros - reserved.held_micros)
    raise BudgetWouldExceed(
        f"This call could cost up to ${micros_to_usd(worst)}, and the agent's {state.budget.period} budget has "
        f"${micros_to_usd(left)} left of ${micros_to_usd(state.budget.limit_micros)}; it was not sent.")


def _refusal_event(agent: Agent, state, worst: int) -> None:
    """agent.budget_exceeded, once per budget and period (claimed in the cache: with it away,
    the refusal still holds and the event waits for the next refused call)."""
    claim = f"model_gateway:cap_event:{state.budget.pk}:{state.window.start.isoformat()}"
    try:
        if not cache.add(claim, 1, timeout=int((state.window.resets_at - timezone.now()).total_seconds()) + 60):
            return
    except CACHE_AWAY as exc:
        logger.warning("The budget refusal event of agent %s was not claimed: %s", agent.pk, exc)
        return
    budget = state.budget
    agent_event(agent, "agent.budget_exceeded",
                f"A model call of agent {agent.name} was refused at the gateway: it could cross its {budget.period} "
                f"budget cap (${micros_to_usd(state.spent_micros)} of ${micros_to_usd(budget.limit_micros)} spent).",
                budgets=[{"id": str(budget.pk), "period": budget.period,
                          "limitUsd": micros_to_usd(budget.limit_micros),
                          "spentUsd": micros_to_usd(state.spent_micros)}],
                refusedCall={"worstUsd": micros_to_usd(worst)}, refusedAt="gateway")
