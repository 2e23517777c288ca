"""Remote Docker host routes: /api/remote-hosts (session only: a key is refused before any
lookup) and /api/admin/remote-hosts (platform admins: platform hosts and their grants).
Thin views: the rules are in agents.targets.remote_hosts and agents.targets.access."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.permissions import PlatformAdminOnly, SessionOnly, principal_of
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView

from . import grants as target_grants
from . import host_limits, remote_hosts
from .serializers import AdminRemoteHostIn, AdminRemoteHostOut, HostTestOut, RemoteHostIn, RemoteHostOut

SESSION = (SessionOnly,)
ADMIN = (PlatformAdminOnly,)


def RemoteHostRole(*, manage: bool) -> type[BasePermission]:  # noqa: N802 - used like a class in `access`
    """Resolves `host_id` once (request.remote_host): a key 403 session_required before any
    lookup; a host the caller may not see 404; `manage` (change, delete, test, share): its owner
    only, 403 for those who merely use it."""

    class _RemoteHostRole(SessionOnly):
        def has_permission(self, request, view):
            super().has_permission(request, view)
            find = remote_hosts.remote_host_owned if manage else remote_hosts.remote_host_visible
            request.remote_host = find(principal_of(request), view.kwargs["host_id"])
            return True

    _RemoteHostRole.__name__ = f"RemoteHostRole[{'owner' if manage else 'user'}]"
    return _RemoteHostRole


class PlatformHost(PlatformAdminOnly):
    """A platform admin, and the platform host `host_id` names (request.remote_host), else 404."""

    def has_permission(self, request, view):
        super().has_permission(request, view)
        request.remote_host = remote_hosts.platform_host_get(view.kwargs["host_id"])
        return True


HOST_USER = (RemoteHostRole(manage=False),)
HOST_OWNER = (RemoteHostRole(manage=True),)
PLATFORM_HOST = (PlatformHost,)


def _valid(serializer_class, request, *, partial: bool = False) -> dict:
    data = serializer_class(data=request.data, partial=partial)
    data.is_valid(raise_exception=True)
    return data.validated_data


def _host_body(hosts, user, *, many: bool = False):
    items = list(hosts) if many else [hosts]
    context = {"user": user, "shares": remote_hosts.shares_of(items)}
    return RemoteHostOut(hosts, many=many, context=context).data


def _admin_body(hosts, user, *, many: bool = False):
    items = list(hosts) if many else [hosts]
    context = {"user": user, "shares": {},
               "grants": target_grants.grants_of_many([host.execution_target_id for host in items])}
    return AdminRemoteHostOut(hosts, many=many, context=context).data


def _count_change(user, host, data: dict) -> None:
    """A PATCH that changes how the host is reached counts against the change limits."""
    if host_limits.changes_connection(data):
        host_limits.count_change(user, data.get("host", host.host), data.get("port", host.port))


# A host's body in the OpenAPI examples (a personal host; a platform host adds its grants).
HOST_EXAMPLE = {
    "name": "build-host", "host": "build-host.example.com", "port": 22, "username": "fleet",
    "auth": {"type": "key", "privateKey": "<the private key, as ssh-keygen wrote it>"},
    "dockerSocket": "/var/run/docker.sock",
}


class RemoteHostListApi(ApiView):
    request_examples = {
        "POST": {
            "My own host, signed in with a key": HOST_EXAMPLE,
        },
    }
    access = {"GET": SESSION, "POST": SESSION}

    @extend_schema(responses=RemoteHostOut(many=True))
    def get(self, request):
        """The caller's Remote Docker hosts and those shared with their workspaces (session only)."""
        hosts = list(remote_hosts.remote_hosts_visible(self.principal))
        return Response(_host_body(hosts, self.principal.user, many=True))

    @extend_schema(request=RemoteHostIn, responses={201: RemoteHostOut})
    def post(self, request):
        """Register a personal Remote Docker host (its SSH credentials encrypted)."""
        host_limits.require_host_registration(self.principal.user)
        data = _valid(RemoteHostIn, request)
        host_limits.count_change(self.principal.user, data.get("host"), data.get("port", 22))
        host = remote_hosts.remote_host_create(owner=self.principal.user, data=data)
        return Response(_host_body(host, self.principal.user), status=status.HTTP_201_CREATED)


class RemoteHostDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "SSH on another port": {"port": 2222},
        },
    }
    access = {"GET": HOST_USER, "PATCH": HOST_OWNER, "DELETE": HOST_OWNER}

    @extend_schema(responses=RemoteHostOut)
    def get(self, request, host_id):
        """One Remote Docker host."""
        return Response(_host_body(request.remote_host, self.principal.user))

    @extend_schema(request=RemoteHostIn, responses=RemoteHostOut)
    def patch(self, request, host_id):
        """Change a host's address or credentials."""
        data = _valid(RemoteHostIn, request, partial=True)
        _count_change(self.principal.user, request.remote_host, data)
        host = remote_hosts.remote_host_update(host=request.remote_host, data=data)
        return Response(_host_body(host, self.principal.user))

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, host_id):
        """Remove a host (refused while agents run on it)."""
        remote_hosts.remote_host_delete(host=request.remote_host)
        return Response(SuccessOut({"success": True}).data)


class RemoteHostTestApi(ApiView):
    access = {"POST": HOST_OWNER}

    @extend_schema(request=None, responses=HostTestOut)
    def post(self, request, host_id):
        """Reach the host's engine over SSH and record the result."""
        host_limits.require_host_registration(self.principal.user)
        host_limits.count_test(self.principal.user, request.remote_host)
        return Response(HostTestOut(remote_hosts.remote_host_test(host=request.remote_host)).data)


class RemoteHostShareApi(ApiView):
    access = {"POST": HOST_OWNER, "DELETE": HOST_OWNER}

    @extend_schema(request=None, responses=RemoteHostOut)
    def post(self, request, host_id, workspace_id):
        """Share the host with a workspace."""
        remote_hosts.remote_host_share(principal=self.principal, host=request.remote_host, workspace_id=workspace_id)
        return Response(_host_body(request.remote_host, self.principal.user))

    @extend_schema(responses={200: RemoteHostOut})
    def delete(self, request, host_id, workspace_id):
        """Stop sharing the host with a workspace."""
        remote_hosts.remote_host_unshare(host=request.remote_host, workspace_id=workspace_id)
        return Response(_host_body(request.remote_host, self.principal.user))


class AdminRemoteHostListApi(ApiView):
    request_examples = {
        "POST": {
            "A platform host, usable by one workspace": {
                **HOST_EXAMPLE,
                "grants": {
                    "allAccounts": False, "users": ["<user id>"], "userGroups": [], "workspaces": ["<workspace id>"],
                },
            },
        },
    }
    access = {"GET": ADMIN, "POST": ADMIN}

    @extend_schema(responses=AdminRemoteHostOut(many=True))
    def get(self, request):
        """Platform Remote Docker hosts (platform admins)."""
        return Response(_admin_body(list(remote_hosts.platform_hosts()), self.principal.user, many=True))

    @extend_schema(request=AdminRemoteHostIn, responses={201: AdminRemoteHostOut})
    def post(self, request):
        """Register a platform Remote Docker host (its SSH credentials encrypted)."""
        data = _valid(AdminRemoteHostIn, request)
        host_limits.count_change(self.principal.user, data.get("host"), data.get("port", 22))
        grants = data.pop("grants", None)
        host = remote_hosts.remote_host_create(owner=None, data=data, grants=grants or {},
                                               created_by=self.principal.user)
        return Response(_admin_body(host, self.principal.user), status=status.HTTP_201_CREATED)


class AdminRemoteHostDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Sign in with a password from now on": {"auth": {"type": "password", "password": "<the new password>"}},
        },
    }
    access = {"GET": PLATFORM_HOST, "PATCH": PLATFORM_HOST, "DELETE": PLATFORM_HOST}

    @extend_schema(responses=AdminRemoteHostOut)
    def get(self, request, host_id):
        """One platform Remote Docker host."""
        return Response(_admin_body(request.remote_host, self.principal.user))

    @extend_schema(request=AdminRemoteHostIn, responses=AdminRemoteHostOut)
    def patch(self, request, host_id):
        """Change a platform host's address, credentials or grants."""
        host = request.remote_host
        data = _valid(AdminRemoteHostIn, request, partial=True)
        _count_change(self.principal.user, host, data)
        grants = data.pop("grants", None)
        host = remote_hosts.remote_host_update(host=host, data=data, grants=grants, acting_user=self.principal.user)
        return Response(_admin_body(host, self.principal.user))

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, host_id):
        """Remove a platform host (refused while agents run on it)."""
        remote_hosts.remote_host_delete(host=request.remote_host)
        return Response(SuccessOut({"success": True}).data)


class AdminRemoteHostTestApi(ApiView):
    access = {"POST": PLATFORM_HOST}

    @extend_schema(request=None, responses=HostTestOut)
    def post(self, request, host_id):
        """Reach a platform host's engine over SSH and record the result."""
        host_limits.count_test(self.principal.user, request.remote_host)
        return Response(HostTestOut(remote_hosts.remote_host_test(host=request.remote_host)).data)
