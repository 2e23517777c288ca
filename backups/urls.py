"""The backup routes, relative to /api/."""

from django.urls import path

from .api import BackupPolicyApi, BackupRestoreApi, BackupsApi

urlpatterns = [
    path("agents/<uuid:agent_id>/backup-policy", BackupPolicyApi.as_view(), name="agent-backup-policy"),
    path("agents/<uuid:agent_id>/backups", BackupsApi.as_view(), name="agent-backups"),
    path("agents/<uuid:agent_id>/backups/<uuid:backup_id>/restore", BackupRestoreApi.as_view(),
         name="agent-backup-restore"),
]
