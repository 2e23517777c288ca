"""GET/PUT /agents/:id/backup-policy, GET/POST /agents/:id/backups, POST .../backups/:bid/restore.

Editors of the agent; keys with agents:write for the writes and agents:read for the reads;
restoring is session only (a key is 403 session_required before any lookup).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from agents.permissions import AgentOperator
from fleet.api.permissions import SessionOnly
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView

from .permissions import BackupReader
from .selectors import backup_get, backup_list, backup_policy_get
from .serializers import (
    BackupOut,
    BackupPolicyIn,
    BackupPolicyOut,
    BackupRestoreIn,
    RestoredAsDraftOut,
    RestoredIntoAgentOut,
)
from .services import (
    DestinationIn,
    backup_policy_delete,
    backup_policy_set,
    backup_request,
    backup_restore_as_draft,
    backup_restore_into_agent,
)


class BackupPolicyApi(ApiView):
    access = {"GET": (BackupReader,), "PUT": (AgentOperator,), "DELETE": (AgentOperator,)}
    request_examples = {"PUT": {"Every night at 03:00 UTC, seven kept": {"schedule": "0 3 * * *", "keep": 7}}}

    @extend_schema(responses=BackupPolicyOut)
    def get(self, request, agent_id):
        """The agent's backup policy: schedule, retention, destination (credentials redacted)."""
        return Response(BackupPolicyOut(backup_policy_get(agent=request.agent_access.agent)).data)

    @extend_schema(request=BackupPolicyIn, responses=BackupPolicyOut)
    def put(self, request, agent_id):
        """Set the agent's backup schedule, how many backups to keep, and where they go."""
        body = BackupPolicyIn(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        given = data["destination"]
        destination = DestinationIn(url=given["url"], access_key_id=given["accessKeyId"],
                                    secret_access_key=given["secretAccessKey"],
                                    region=given["region"]) if given else None
        policy = backup_policy_set(agent=request.agent_access.agent, schedule=data["schedule"], keep=data["keep"],
                                   destination=destination)
        return Response(BackupPolicyOut(policy).data)

    @extend_schema(responses=SuccessOut)
    def delete(self, request, agent_id):
        """Stop backing the agent up on a schedule (its backups stay)."""
        backup_policy_get(agent=request.agent_access.agent)  # 404 when there is none
        backup_policy_delete(agent=request.agent_access.agent)
        return Response(SuccessOut({"success": True}).data)


class BackupsApi(ApiView):
    access = {"GET": (BackupReader,), "POST": (AgentOperator,)}

    @extend_schema(responses=BackupOut(many=True))
    def get(self, request, agent_id):
        """The agent's backups, newest first."""
        return Response(BackupOut(backup_list(agent=request.agent_access.agent), many=True).data)

    @extend_schema(request=None, responses={202: BackupOut})
    def post(self, request, agent_id):
        """Back the agent up now (the work is done in the background: poll the list)."""
        backup = backup_request(agent=request.agent_access.agent)
        return Response(BackupOut(backup).data, status=status.HTTP_202_ACCEPTED)


class BackupRestoreApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (SessionOnly, AgentOperator)}
    request_examples = {"POST": {"Into this agent": {"into": "same"}, "As a new agent's draft": {"into": "new"}}}

    @extend_schema(request=BackupRestoreIn, responses={
        202: RestoredIntoAgentOut,
        201: RestoredAsDraftOut,
    })
    def post(self, request, agent_id, backup_id):
        """Restore a completed backup into this agent (in the background: stopped, redeployed on it) or as a new
        agent's draft."""
        body = BackupRestoreIn(data=request.data)
        body.is_valid(raise_exception=True)
        backup = backup_get(agent=request.agent_access.agent, backup_id=backup_id)
        if body.validated_data["into"] == "same":
            agent = backup_restore_into_agent(backup=backup)
            return Response(RestoredIntoAgentOut(agent).data, status=status.HTTP_202_ACCEPTED)
        draft = backup_restore_as_draft(backup=backup, user=self.principal.user)
        return Response(RestoredAsDraftOut(draft).data, status=status.HTTP_201_CREATED)
