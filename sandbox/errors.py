"""The sandbox's errors (fleet.errors families; fleet/api/errors.py maps them to statuses)."""

from __future__ import annotations

from fleet.errors import Conflict, InvalidRequest


class NotSandboxed(InvalidRequest):  # 400
    code = "not_sandboxed"
    default_message = "This agent does not run the nemoclaw sandbox profile."


class ApprovalDecided(Conflict):  # 409
    code = "approval_decided"
    default_message = "This approval request was already decided."


class ApprovalExpired(Conflict):  # 409
    code = "approval_expired"
    default_message = "This approval request expired."
