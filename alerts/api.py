"""Alert-rule and event routes: thin views over alerts.services and alerts.selectors.

Access goes through workspaces.access: reads need the role viewer (a key: agents:read, or
agents:write, which includes reading); writes and tests need admin (a key: agents:write).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.serializers import SuccessOut
from fleet.api.throttling import relay_test_throttle
from fleet.api.views import ApiView
from workspaces.access import WorkspaceRole
from workspaces.roles import Role, Scope

from . import selectors, services
from .serializers import AlertRuleInput, AlertRuleOutput, EventOutput, EventsQuery

# agents:write includes reading (fleet.api.principal.IMPLIED_SCOPES).
WorkspaceReader = WorkspaceRole(Role.VIEWER, key_scope=Scope.AGENTS_READ)
WorkspaceAdmin = WorkspaceRole(Role.ADMIN, key_scope=Scope.AGENTS_WRITE)


class AlertRuleListApi(ApiView):
    request_examples = {
        "POST": {
            "Agent errors to a webhook and an inbox": {
                "name": "Agent errors", "eventPattern": "agent.error", "enabled": True,
                "channels": [
                    {"type": "webhook", "url": "https://hooks.example.com/fleet"},
                    {"type": "email", "to": ["oncall@example.com"], "subjectPrefix": "[fleet]"},
                ],
            },
        },
    }
    access = {"GET": (WorkspaceReader,), "POST": (WorkspaceAdmin,)}

    @extend_schema(responses=AlertRuleOutput(many=True))
    def get(self, request, workspace_id):
        """The workspace's alert rules."""
        rules = selectors.alert_rules_of_workspace(workspace_id=workspace_id)
        return Response(AlertRuleOutput(rules, many=True).data)

    @extend_schema(request=AlertRuleInput, responses=AlertRuleOutput)
    def post(self, request, workspace_id):
        """Create an alert rule (webhook or email)."""
        body = AlertRuleInput(data=request.data)
        body.is_valid(raise_exception=True)
        rule = services.alert_rule_create(
            workspace=request.workspace_access.workspace, created_by=self.principal.user, **body.service_kwargs()
        )
        return Response(AlertRuleOutput(selectors.alert_rule_get(workspace_id=workspace_id, rule_id=rule.id)).data)


class AlertRuleDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Pause the rule": {"enabled": False},
        },
    }
    access = {"PATCH": (WorkspaceAdmin,), "DELETE": (WorkspaceAdmin,)}

    @extend_schema(request=AlertRuleInput(partial=True), responses=AlertRuleOutput)
    def patch(self, request, workspace_id, rule_id):
        """Change an alert rule."""
        rule = selectors.alert_rule_get(workspace_id=workspace_id, rule_id=rule_id)
        body = AlertRuleInput(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        services.alert_rule_update(rule=rule, **body.service_kwargs())
        return Response(AlertRuleOutput(selectors.alert_rule_get(workspace_id=workspace_id, rule_id=rule_id)).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id, rule_id):
        """Delete an alert rule."""
        rule = selectors.alert_rule_get(workspace_id=workspace_id, rule_id=rule_id)
        services.alert_rule_delete(rule=rule)
        return Response(SuccessOut({"success": True}).data)


class AlertRuleTestApi(ApiView):
    documented_errors = (429,)
    access = {"POST": (WorkspaceAdmin,)}

    @extend_schema(request=None, responses=SuccessOut)
    def post(self, request, workspace_id, rule_id):
        """Send a test alert through the rule's channel."""
        rule = selectors.alert_rule_get(workspace_id=workspace_id, rule_id=rule_id)
        # A test relays mail and webhooks on demand: the relay rule, recipients per workspace.
        relay_test_throttle(subject=f"alert_rule:{rule.pk}", user_id=self.principal.user.pk,
                            recipients_holder=f"workspace:{workspace_id}",
                            recipients=selectors.alert_rule_recipient_count(rule=rule))
        services.alert_rule_test(rule=rule)
        return Response(SuccessOut({"success": True}).data)


class WorkspaceEventListApi(ApiView):
    access = {"GET": (WorkspaceReader,)}

    @extend_schema(parameters=[EventsQuery], responses=EventOutput(many=True))
    def get(self, request, workspace_id):
        """The workspace's events, newest first."""
        query = EventsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        events = selectors.events_of_workspace(principal=self.principal, workspace_id=workspace_id,
                                               limit=query.validated_data["limit"])
        return Response(EventOutput(events, many=True).data)
