"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

PREFIX = "agents/<uuid:agent_id>/nemoclaw"

urlpatterns = [
    path(f"{PREFIX}/status", api.SandboxStatusApi.as_view(), name="sandbox-status"),
    path(f"{PREFIX}/policy", api.SandboxPolicyApi.as_view(), name="sandbox-policy"),
    path(f"{PREFIX}/approvals", api.SandboxApprovalsApi.as_view(), name="sandbox-approvals"),
    path(f"{PREFIX}/approvals/<str:request_id>", api.SandboxApprovalDecisionApi.as_view(),
         name="sandbox-approval-decision"),
]
