"""Routes under /api/ (paths have no trailing slash, as in the spec).

Only `<uuid:...>` converters after `workspaces/`: `workspaces/cost` and the agents' and
alerts' sub-routes of a workspace belong to other apps and must fall through to them.
"""

from django.urls import path

from . import api, audit_api

urlpatterns = [
    path("workspaces", api.WorkspaceListApi.as_view(), name="workspace-list"),
    path("workspaces/<uuid:workspace_id>", api.WorkspaceDetailApi.as_view(), name="workspace-detail"),
    path("workspaces/<uuid:workspace_id>/members", api.MemberListApi.as_view(), name="workspace-member-list"),
    path(
        "workspaces/<uuid:workspace_id>/members/<uuid:user_id>",
        api.MemberDetailApi.as_view(),
        name="workspace-member-detail",
    ),
    path("workspaces/<uuid:workspace_id>/invitations", api.WorkspaceInvitationListApi.as_view(),
         name="workspace-invitation-list"),
    path("workspaces/<uuid:workspace_id>/invitations/<uuid:invitation_id>", api.WorkspaceInvitationDetailApi.as_view(),
         name="workspace-invitation-detail"),
    path("workspaces/<uuid:workspace_id>/audit", audit_api.WorkspaceAuditListApi.as_view(),
         name="workspace-audit"),
    path("invitations", api.MyInvitationListApi.as_view(), name="invitation-list"),
    path("invitations/<uuid:invitation_id>", api.MyInvitationDetailApi.as_view(), name="invitation-detail"),
    path("invitations/<uuid:invitation_id>/accept", api.MyInvitationAcceptApi.as_view(), name="invitation-accept"),
    path("workspaces/<uuid:workspace_id>/api-keys", api.ApiKeyListApi.as_view(), name="workspace-api-key-list"),
    path(
        "workspaces/<uuid:workspace_id>/api-keys/<uuid:key_id>",
        api.ApiKeyDetailApi.as_view(),
        name="workspace-api-key-detail",
    ),
]
