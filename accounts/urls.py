"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api, groups_api

urlpatterns = [
    path("auth/bootstrap-status", api.BootstrapStatusApi.as_view(), name="auth-bootstrap-status"),
    path("auth/signup", api.SignupApi.as_view(), name="auth-signup"),
    path("auth/login", api.LoginApi.as_view(), name="auth-login"),
    path("auth/me", api.MeApi.as_view(), name="auth-me"),
    path("auth/profile", api.ProfileApi.as_view(), name="auth-profile"),
    path("auth/password", api.PasswordApi.as_view(), name="auth-password"),
    path("auth/oauth-login", api.OAuthLoginApi.as_view(), name="auth-oauth-login"),
    path("auth/session-upgrade", api.SessionUpgradeApi.as_view(), name="auth-session-upgrade"),
    path("auth/logout", api.LogoutApi.as_view(), name="auth-logout"),
    path("admin/user-groups", groups_api.UserGroupListApi.as_view(), name="admin-user-group-list"),
    path("admin/user-groups/<str:group_id>", groups_api.UserGroupDetailApi.as_view(), name="admin-user-group-detail"),
    path(
        "admin/user-groups/<str:group_id>/members",
        groups_api.UserGroupMemberListApi.as_view(),
        name="admin-user-group-member-list",
    ),
    path(
        "admin/user-groups/<str:group_id>/members/<str:user_id>",
        groups_api.UserGroupMemberDetailApi.as_view(),
        name="admin-user-group-member-detail",
    ),
]
