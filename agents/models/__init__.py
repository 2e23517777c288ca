"""Agents' models. Sub-modules add their models here so `agents.models.X` keeps working."""

from .agent import (
    IN_FLIGHT,
    SERVING,
    Agent,
    DeployTarget,
    ModelRouting,
    PausedReason,
    RuntimeFamily,
    SandboxProfile,
    Status,
)
from .assignment import AssignmentsRevision, WorkspaceAgent
from .budget import Budget, BudgetPeriod
from .engine import EngineHealth, EngineState
from .gateway_device import GatewayDevice
from .idempotency import DeployIdempotencyKey
from .llm_model import AgentModel
from .stats import StatsSample
from .terminal import TerminalEnd, TerminalSession, TerminalVia
from .usage import AgentSpendDay, AgentSpendMonth, ModelRate, RateSource, UsageDaily, UsageEvent

__all__ = [
    "IN_FLIGHT",
    "SERVING",
    "Agent",
    "AgentModel",
    "AgentSpendDay",
    "AgentSpendMonth",
    "AssignmentsRevision",
    "Budget",
    "BudgetPeriod",
    "DeployIdempotencyKey",
    "DeployTarget",
    "EngineHealth",
    "EngineState",
    "GatewayDevice",
    "ModelRate",
    "ModelRouting",
    "PausedReason",
    "RateSource",
    "RuntimeFamily",
    "SandboxProfile",
    "StatsSample",
    "Status",
    "TerminalEnd",
    "TerminalSession",
    "TerminalVia",
    "UsageDaily",
    "UsageEvent",
    "WorkspaceAgent",
]
