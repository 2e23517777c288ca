"""Agents' models. Sub-modules add their models here so `agents.models.X` keeps working."""

from .agent import Agent, DeployTarget, PausedReason, RuntimeFamily, SandboxProfile, Status
from .assignment import WorkspaceAgent
from .stats import StatsSample

__all__ = [
    "Agent",
    "DeployTarget",
    "PausedReason",
    "RuntimeFamily",
    "SandboxProfile",
    "StatsSample",
    "Status",
    "WorkspaceAgent",
]
