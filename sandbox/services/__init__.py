"""Writes of the sandbox app: policies (versions and applying them) and approvals."""

from .apply import policy_apply, policy_apply_enqueue, policy_apply_now
from .approvals import (
    approval_decide,
    approval_event_record,
    approvals_expire,
    approvals_forget_pending,
)
from .policies import policy_current, policy_save

__all__ = [
    "approval_decide",
    "approval_event_record",
    "approvals_expire",
    "approvals_forget_pending",
    "policy_apply",
    "policy_apply_enqueue",
    "policy_apply_now",
    "policy_current",
    "policy_save",
]
