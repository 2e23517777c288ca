"""The gateway's refusals: Fleet errors (their status from fleet.api.errors), answered in the
caller's wire format (wire.error_body)."""

from __future__ import annotations

from fleet.errors import BillingLimit, Conflict, Forbidden, InvalidRequest, TooManyRequests


class BudgetWouldExceed(BillingLimit):  # 402
    code = "budget_exceeded"
    default_message = "This call could cross the agent's budget cap; it was not sent."


class GatewayNotEnabled(Forbidden):
    code = "gateway_not_enabled"
    default_message = "This agent's model calls do not go through Fleet (modelRouting is direct)."


class AgentNotServing(Forbidden):
    code = "agent_not_running"
    default_message = "The agent is not running."


class ModelNotAllowed(Forbidden):
    code = "model_not_allowed"
    default_message = "This agent may not call this model."


class NoModel(Conflict):
    code = "no_model"
    default_message = "The agent has no model in Fleet: choose one (PUT /api/agents/:id/model)."


class UnsupportedFormat(InvalidRequest):
    code = "unsupported_format"
    default_message = "The agent's provider does not speak this format."


class RateLimited(TooManyRequests):
    """Over a per-minute limit; `retry_after` is the seconds until the minute ends."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after
