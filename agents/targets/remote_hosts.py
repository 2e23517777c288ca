"""Remote Docker hosts: registration, update, delete, the connection test that pins the host
key, and shares of personal hosts with workspaces (docs/api.md "Registered targets"; docs/api.md "Remote
Docker hosts"). Who may deploy to a host is agents.targets.access's alone.

Changing how a host is reached (host, port, user, credentials, socket) sets it back to
`untested`: deploys need a fresh successful test. Changing the host or port also drops the
pinned host key (another address is another machine); so does PATCH hostKeyFingerprint=null,
the way to accept a host key that changed on purpose.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.deletion import UserHoldings, named
from fleet import netsafety
from fleet.api.fields import uuid_or_none
from fleet.api.principal import Principal
from fleet.errors import Conflict, Forbidden, NotFound, ValidationFailed
from workspaces.access import workspace_access
from workspaces.models import Workspace
from workspaces.roles import Role

from ..backends.ssh_endpoint import (
    InvalidPrivateKey,
    SshEndpoint,
    SshFailure,
    allow_private,
    allowed_networks,
    host_addresses,
)
from ..models import Agent
from . import grants as target_grants
from .access import usable_remote_hosts
from .host_limits import require_host_registration
from .models import AuthType, GranteeKind, HostStatus, RemoteHost, TargetGrant
from .rows import ssh_endpoint_of, stored_secret

HOST_NOT_FOUND = "Remote Docker host not found."
MASK = "[REDACTED]"
USERNAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")
SOCKET_PATH = re.compile(r"^/[A-Za-z0-9._/-]{1,254}$")
HOSTNAME = re.compile(r"^[A-Za-z0-9.:\[\]-]{1,253}$")
MAX_PRIVATE_KEY, MAX_SECRET = 16384, 1024
CONNECTION_FIELDS = ("host", "port", "username", "auth_type", "private_key", "passphrase", "password",
                     "docker_socket")


class HostInUse(Conflict):
    code = "host_in_use"
    default_message = "Agents still run on this host; delete or move them first."


# -- reads ----------------------------------------------------------------------------------------


def remote_hosts_visible(principal: Principal) -> QuerySet[RemoteHost]:
    """GET /remote-hosts: the hosts the caller may use (agents.targets.access, the one grant
    rule): its own, personal hosts shared with a workspace where it is editor or above, and
    platform hosts granted to it (all for a platform admin)."""
    return RemoteHost.objects.filter(usable_remote_hosts(principal)).order_by("-created_at", "id")


def remote_host_visible(principal: Principal, host_id) -> RemoteHost:
    uuid = uuid_or_none(host_id)
    host = remote_hosts_visible(principal).filter(pk=uuid).first() if uuid else None
    if host is None:
        raise NotFound(HOST_NOT_FOUND)
    return host


def remote_host_owned(principal: Principal, host_id) -> RemoteHost:
    """A personal host the caller owns: 404 when it may not see it, 403 when it only uses it."""
    host = remote_host_visible(principal, host_id)
    if host.owner_id != principal.user.pk:
        raise Forbidden("Only the host's owner may change it (platform hosts: /api/admin/remote-hosts).")
    return host


def platform_host_get(host_id) -> RemoteHost:
    uuid = uuid_or_none(host_id)
    host = RemoteHost.objects.filter(pk=uuid, owner__isnull=True).first() if uuid else None
    if host is None:
        raise NotFound(HOST_NOT_FOUND)
    return host


def platform_hosts() -> QuerySet[RemoteHost]:
    return RemoteHost.objects.filter(owner__isnull=True).order_by("-created_at", "id")


def shares_of(hosts) -> dict:
    """host id -> the workspace ids a personal host is shared with (one query)."""
    ids = {f"remote:{host.pk}": host.pk for host in hosts}
    found = {host_id: [] for host_id in ids.values()}
    rows = TargetGrant.objects.filter(execution_target_id__in=list(ids), kind=GranteeKind.WORKSPACE)
    for target_id, workspace_id in rows.order_by("id").values_list("execution_target_id", "workspace_id"):
        found[ids[target_id]].append(workspace_id)
    return found


# -- input ----------------------------------------------------------------------------------------


def _clean_host(value: str) -> str:
    host = value.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or not HOSTNAME.match(host) or "://" in value:
        raise ValidationFailed({"host": "Give a host name or an IP address (no scheme, path or port)."})
    return host.lower()


def _check_reachable_rule(host: str, port: int) -> None:
    try:
        host_addresses(host, port, allow_private=allow_private(), allowed_networks=allowed_networks())
    except netsafety.UnsafeTarget as exc:
        raise ValidationFailed({"host": f"{exc} (REMOTE_HOST_ALLOWED_NETWORKS and the outbound rule)"}) from None


def _clean_socket(value: str) -> str:
    path = value.strip()
    if not SOCKET_PATH.match(path) or posixpath.normpath(path) != path:
        raise ValidationFailed({"dockerSocket": "Give the absolute path of the engine's Unix socket."})
    return path


def _clean_username(value: str) -> str:
    if not USERNAME.match(value):
        raise ValidationFailed({"username": "Give a user name of letters, digits, '.', '_' or '-' (1 to 100)."})
    return value


def _given(value) -> bool:
    """A secret the request really sends (the mask sent back means "keep the stored one")."""
    return isinstance(value, str) and value != "" and value != MASK


def _auth_fields(auth: dict, current: RemoteHost | None) -> dict:
    """The auth_type and secret columns an `auth` object sets (validated; keys are parsed)."""
    auth_type = auth.get("type") or (current.auth_type if current else None)
    if auth_type not in AuthType.values:
        raise ValidationFailed({"auth.type": "Give the type: key or password."})
    same_type = current is not None and current.auth_type == auth_type
    if auth_type == AuthType.KEY:
        private_key = auth.get("privateKey")
        passphrase = auth.get("passphrase")
        if not _given(private_key):
            if not same_type:
                raise ValidationFailed({"auth.privateKey": "A private key is required for key authentication."})
            private_key = stored_secret(current.private_key)
            if not _given(passphrase) and passphrase != "":
                passphrase = stored_secret(current.passphrase)
        passphrase = passphrase if _given(passphrase) else None
        if len(private_key or "") > MAX_PRIVATE_KEY or len(passphrase or "") > MAX_SECRET:
            raise ValidationFailed({"auth.privateKey": "The private key or passphrase is too long."})
        from ..backends.ssh import load_private_key  # paramiko: only where a key is read

        try:
            load_private_key(private_key or "", passphrase)
        except InvalidPrivateKey as exc:
            raise ValidationFailed({"auth.privateKey": str(exc)}) from None
        return {"auth_type": auth_type, "private_key": private_key, "passphrase": passphrase, "password": None}
    password = auth.get("password")
    if not _given(password):
        if not same_type:
            raise ValidationFailed({"auth.password": "A password is required for password authentication."})
        password = stored_secret(current.password)
    if not password or len(password) > MAX_SECRET:
        raise ValidationFailed({"auth.password": f"Give a password of 1 to {MAX_SECRET} characters."})
    return {"auth_type": auth_type, "private_key": None, "passphrase": None, "password": password}


def _fields_from(data: dict, current: RemoteHost | None) -> dict:
    """Model fields from a validated request body (create: every required one; PATCH: those given)."""
    fields: dict = {}
    if "name" in data:
        name = data["name"].strip()
        if not name:
            raise ValidationFailed({"name": "This field may not be blank."})
        fields["name"] = name
    if "host" in data:
        fields["host"] = _clean_host(data["host"])
    if "port" in data:
        fields["port"] = data["port"]
    if "username" in data:
        fields["username"] = _clean_username(data["username"])
    if "dockerSocket" in data:
        fields["docker_socket"] = _clean_socket(data["dockerSocket"])
    if "auth" in data:
        fields.update(_auth_fields(data["auth"], current))
    if "host" in fields or "port" in fields:
        _check_reachable_rule(fields.get("host", current.host if current else ""),
                              fields.get("port", current.port if current else 22))
    return fields


# -- writes ---------------------------------------------------------------------------------------


@transaction.atomic
def remote_host_create(*, owner, data: dict, grants: dict | None = None, created_by=None) -> RemoteHost:
    """Register a host (owner None: a platform host, with `grants`). It starts `untested`."""
    if owner is not None:
        require_host_registration(owner)  # REMOTE_HOSTS_ENABLED_FOR
    missing = [name for name in ("name", "host", "username", "auth") if name not in data]
    if missing:
        raise ValidationFailed({name: "This field is required." for name in missing})
    fields = _fields_from(data, None)
    host = RemoteHost.objects.create(owner=owner, **fields)
    if grants is not None:
        target_grants.target_grants_set(execution_target_id=host.execution_target_id,
                                        grants=target_grants.grants_parse(grants), created_by=created_by)
    return host


@transaction.atomic
def remote_host_update(*, host: RemoteHost, data: dict, grants: dict | None = None, acting_user=None) -> RemoteHost:
    host = RemoteHost.objects.select_for_update().get(pk=host.pk)
    fields = {name: value for name, value in _fields_from(data, host).items() if getattr(host, name) != value}
    if host.owner_id is not None and any(name in fields for name in CONNECTION_FIELDS):
        require_host_registration(host.owner)  # a new address or credential is a new registration
    if "host" in fields or "port" in fields or ("hostKeyFingerprint" in data and data["hostKeyFingerprint"] is None):
        fields["host_key_fingerprint"] = ""
    if any(name in fields for name in (*CONNECTION_FIELDS, "host_key_fingerprint")):
        fields.update(status=HostStatus.UNTESTED, last_error="")
    for name, value in fields.items():
        setattr(host, name, value)
    if fields:
        host.save(update_fields=[*fields, "updated_at"])
    if grants is not None:
        current = target_grants.grants_of(host.execution_target_id)
        target_grants.target_grants_set(execution_target_id=host.execution_target_id,
                                        grants=target_grants.grants_parse(grants, current=current),
                                        created_by=acting_user)
    return host


@transaction.atomic
def remote_host_delete(*, host: RemoteHost) -> None:
    if Agent.objects.filter(execution_target_id=host.execution_target_id).exists():
        raise HostInUse()
    target_grants.target_grants_delete(execution_target_id=host.execution_target_id)
    host.delete()


def remote_hosts_holding(user) -> UserHoldings:
    """accounts.deletion holder: a user's hosts that agents still use keep the user until those
    agents are deleted (anyone's: a shared host runs others' agents too); idle hosts go with the
    user through remote_host_delete (with their grants). Registered by TargetsConfig.ready."""
    hosts = list(RemoteHost.objects.filter(owner_id=user.pk).order_by("name", "id"))
    if not hosts:
        return UserHoldings()
    agents_on: dict[str, list] = {}
    for agent in Agent.objects.filter(execution_target_id__in=[host.execution_target_id for host in hosts]).order_by(
            "name", "id"):
        agents_on.setdefault(agent.execution_target_id, []).append(agent)
    in_use = [host for host in hosts if host.execution_target_id in agents_on]
    idle = [host for host in hosts if host.execution_target_id not in agents_on]
    blockers = tuple(f"the agents on their Remote Docker host '{host.name}': "
                     f"{named(agents_on[host.execution_target_id])}" for host in in_use)

    def release() -> None:
        for host in idle:
            remote_host_delete(host=host)

    return UserHoldings(blockers=blockers, held=tuple(in_use), released=tuple(idle), release=release)


@dataclass(frozen=True)
class HostTestResult:
    ok: bool
    status: str
    host_key_fingerprint: str | None
    docker_version: str | None
    error: str | None = None
    code: str | None = None


def _ssh_failure_in(exc: BaseException) -> SshFailure | None:
    """The SSH failure behind a docker-py/requests error (they wrap what the channel raised)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, SshFailure):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _probe(endpoint: SshEndpoint) -> tuple[str, str]:
    """(host key fingerprint, Docker version) over a fresh connection; SshFailure or a docker
    error otherwise. Connects without a pin only when the host has none yet."""
    # paramiko and docker-py: loaded when a host is first probed, not by every web worker at start.
    from ..backends.remote_docker import ssh_docker_client
    from ..backends.ssh import SshTunnel

    tunnel = SshTunnel(endpoint, require_pin=False)
    client = None
    try:
        client = ssh_docker_client(tunnel)
        version = client.version()
        return tunnel.fingerprint, str(version.get("Version") or "unknown")
    finally:
        if client is not None:
            client.close()
        tunnel.close()


def remote_host_test(*, host: RemoteHost) -> HostTestResult:
    """Connect over SSH and ask the engine its version. The first success pins the host key;
    with a pin, another host key fails closed (host_key_mismatch). The result is stored unless
    the host was changed while the test ran (then it is stale and only answered)."""
    if host.owner_id is not None:
        require_host_registration(host.owner)  # REMOTE_HOSTS_ENABLED_FOR: no probing from old rows
    started_from = host.updated_at
    try:
        fingerprint, docker_version = _probe(ssh_endpoint_of(host))
        error = code = None
    except Exception as exc:  # every failure is the test's answer, never a 500
        failure = _ssh_failure_in(exc)
        fingerprint, docker_version = host.host_key_fingerprint, host.docker_version
        code = failure.code if failure else "docker_unreachable"
        error = str(failure) if failure else f"The Docker engine did not answer over SSH: {type(exc).__name__}."
    now = timezone.now()
    fields = {"last_tested_at": now, "updated_at": now, "last_error": error or ""}
    if error is None:
        fields.update(status=HostStatus.READY, host_key_fingerprint=fingerprint, docker_version=docker_version)
    else:
        fields.update(status=HostStatus.FAILED)
    stored = RemoteHost.objects.filter(pk=host.pk, updated_at=started_from).update(**fields)
    if stored:
        for name, value in fields.items():
            setattr(host, name, value)
    return HostTestResult(
        ok=error is None, status=fields["status"] if stored else host.status,
        host_key_fingerprint=(fingerprint or None) if error is None else (host.host_key_fingerprint or None),
        docker_version=docker_version or None, error=error, code=code,
    )


def remote_host_share(*, principal: Principal, host: RemoteHost, workspace_id) -> Workspace:
    """Share a personal host with a workspace where its owner is editor or above."""
    workspace = workspace_access(principal, workspace_id, min_role=Role.EDITOR, session_only=True).workspace
    target_grants.target_grant_workspace_add(execution_target_id=host.execution_target_id, workspace=workspace,
                                             created_by=principal.user)
    return workspace


def remote_host_unshare(*, host: RemoteHost, workspace_id) -> None:
    """Stop sharing (the owner may, even after leaving the workspace); 404 when not shared."""
    uuid = uuid_or_none(workspace_id)
    workspace = Workspace.objects.filter(pk=uuid).first() if uuid else None
    if workspace is None or not target_grants.target_grant_workspace_remove(
        execution_target_id=host.execution_target_id, workspace=workspace
    ):
        raise NotFound("The host is not shared with this workspace.")
