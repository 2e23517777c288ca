"""Routes under /api/ for registered targets (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

urlpatterns = [
    path("remote-hosts", api.RemoteHostListApi.as_view(), name="remote-host-list"),
    path("remote-hosts/<str:host_id>", api.RemoteHostDetailApi.as_view(), name="remote-host-detail"),
    path("remote-hosts/<str:host_id>/test", api.RemoteHostTestApi.as_view(), name="remote-host-test"),
    path(
        "remote-hosts/<str:host_id>/shares/<str:workspace_id>",
        api.RemoteHostShareApi.as_view(),
        name="remote-host-share",
    ),
    path("admin/remote-hosts", api.AdminRemoteHostListApi.as_view(), name="admin-remote-host-list"),
    path("admin/remote-hosts/<str:host_id>", api.AdminRemoteHostDetailApi.as_view(), name="admin-remote-host-detail"),
    path("admin/remote-hosts/<str:host_id>/test", api.AdminRemoteHostTestApi.as_view(), name="admin-remote-host-test"),
]
