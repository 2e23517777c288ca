"""The nemoclaw routes (spec "Sandbox profile controls"). Thin: access, input, one service."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView

from .access import SandboxOperator, SandboxReader
from .selectors import approvals_pending, policy_state, sandbox_status
from .serializers import ApprovalOut, DecisionIn, PolicyDocumentIO, PolicyOut, StatusOut
from .services import approval_decide, policy_apply_now, policy_current, policy_save


class SandboxStatusApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": SandboxReader}

    @extend_schema(summary="The sandbox's state and policy summary (from the lifecycle when not running)",
                   responses=StatusOut)
    def get(self, request, agent_id):
        return Response(StatusOut(sandbox_status(request.agent_access.agent)).data)


class SandboxPolicyApi(ApiView):
    request_examples = {
        "POST": {
            "Ask before commands, known hosts only": {
                "exec": {
                    "mode": "ask",
                    "allow": [{"pattern": "/usr/bin/git"}, {"pattern": "/usr/bin/npm", "argPattern": "^test"}],
                },
                "tools": {"profile": "coding", "allow": [], "deny": []},
                "network": {"allow": ["api.github.com", "registry.npmjs.org"], "deny": []},
                "model": "nvidia/nemotron-3-super-120b-a12b",
            },
        },
    }
    documented_errors = (409, 502)
    access = {"GET": SandboxReader, "POST": SandboxOperator}

    @extend_schema(summary="The current policy version and whether it reached the runtime", responses=PolicyOut)
    def get(self, request, agent_id):
        return Response(PolicyOut(policy_state(policy_current(request.agent_access.agent))).data)

    @extend_schema(summary="Store a new policy version and apply it at once to a running sandbox",
                   request=PolicyDocumentIO, responses=PolicyOut)
    def post(self, request, agent_id):
        agent = request.agent_access.agent
        policy_save(agent=agent, body=request.data, user=self.principal.user)
        return Response(PolicyOut(policy_state(policy_apply_now(agent))).data)


class SandboxApprovalsApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": SandboxReader}

    @extend_schema(summary="Pending approval requests (an empty list when none)", responses=ApprovalOut(many=True))
    def get(self, request, agent_id):
        return Response(ApprovalOut(approvals_pending(request.agent_access.agent), many=True).data)


class SandboxApprovalDecisionApi(ApiView):
    request_examples = {
        "POST": {
            "Let the command run": {"decision": "approve"},
        },
    }
    documented_errors = (409, 502)
    access = {"POST": SandboxOperator}

    @extend_schema(summary="Approve (allow once) or deny a pending request on the runtime",
                   request=DecisionIn, responses=ApprovalOut)
    def post(self, request, agent_id, request_id):
        data = DecisionIn(data=request.data)
        data.is_valid(raise_exception=True)
        approval = approval_decide(agent=request.agent_access.agent, request_id=request_id,
                                   decision=data.validated_data["decision"], user=self.principal.user)
        return Response(ApprovalOut(approval).data)
