"""GET/PUT /agents/:id/budget and DELETE /agents/:id/budget/:budgetId.

Viewers read, editors write; keys need agents:read to read and agents:write to write
(agents.permissions gives 404 for agents the caller cannot see).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView

from ..models.budget import DEFAULT_SOFT_THRESHOLD_PCT
from ..permissions import AgentOperator, AgentReader
from .selectors import agent_budget_report, budget_of_agent, budget_state
from .serializers import BudgetInput, BudgetOut, BudgetReportOut
from .services import budget_delete, budget_upsert


class AgentBudgetApi(ApiView):
    request_examples = {
        "PUT": {
            "50 dollars a month, warned at 80%": {"period": "monthly", "limit_usd": 50, "soft_threshold_pct": 80},
        },
    }
    access = {"GET": (AgentReader,), "PUT": (AgentOperator,)}

    @extend_schema(summary="The agent's budgets with current spend, and why it is paused", responses=BudgetReportOut)
    def get(self, request, agent_id):
        return Response(BudgetReportOut(agent_budget_report(agent=request.agent_access.agent)).data)

    @extend_schema(summary="Create or update the budget of one period", request=BudgetInput,
                   responses={201: BudgetOut, 200: BudgetOut})
    def put(self, request, agent_id):
        agent = request.agent_access.agent
        data = _valid(BudgetInput, request.data)
        budget, created = budget_upsert(
            agent=agent,
            period=data["period"],
            limit_usd=data["limit_usd"],
            soft_threshold_pct=data.get("soft_threshold_pct", DEFAULT_SOFT_THRESHOLD_PCT),
        )
        body = BudgetOut(budget_state(budget=budget)).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class AgentBudgetDetailApi(ApiView):
    access = {"DELETE": (AgentOperator,)}

    @extend_schema(summary="Remove a budget (a paused agent stays stopped until started)",
                   responses={200: SuccessOut})
    def delete(self, request, agent_id, budget_id):
        budget = budget_of_agent(agent=request.agent_access.agent, budget_id=budget_id)
        budget_delete(budget=budget)
        return Response(SuccessOut({"success": True}).data)


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
