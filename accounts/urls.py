"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

urlpatterns = [
    path("auth/bootstrap-status", api.BootstrapStatusApi.as_view(), name="auth-bootstrap-status"),
    path("auth/signup", api.SignupApi.as_view(), name="auth-signup"),
    path("auth/login", api.LoginApi.as_view(), name="auth-login"),
    path("auth/me", api.MeApi.as_view(), name="auth-me"),
    path("auth/profile", api.ProfileApi.as_view(), name="auth-profile"),
    path("auth/password", api.PasswordApi.as_view(), name="auth-password"),
    path("auth/oauth-login", api.OAuthLoginApi.as_view(), name="auth-oauth-login"),
    path("auth/session-upgrade", api.SessionUpgradeApi.as_view(), name="auth-session-upgrade"),
    path("auth/provider-keys/<str:provider>", api.ProviderKeyApi.as_view(), name="auth-provider-key"),
    path("auth/logout", api.LogoutApi.as_view(), name="auth-logout"),
]
