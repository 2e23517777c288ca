"""What names a Remote Docker host's SSH connection and how it fails, without paramiko; and the
one rule for where a host may be (`host_addresses`): registration, every SSH connection and every
connection to its agents' gateways resolve the host once, check every address with it, and
connect to exactly those addresses.

agents.backends.ssh opens the connections (paramiko, about 30 MB in a process); the web process
needs only these to validate and describe hosts, and imports ssh when it connects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from fleet import netsafety

from .base import BackendUnreachable


class SshFailure(BackendUnreachable):
    """The host could not be reached, would not let us in, or would not forward to Docker."""

    code = "ssh_failed"


class HostUnreachable(SshFailure):
    code = "unreachable"


class HostNotAllowed(SshFailure):
    code = "host_not_allowed"


class HostKeyMismatch(SshFailure):
    code = "host_key_mismatch"


class HostNotPinned(SshFailure):
    code = "host_not_tested"


class AuthenticationFailed(SshFailure):
    code = "auth_failed"


class DockerSocketRefused(SshFailure):
    code = "docker_socket_refused"


class InvalidPrivateKey(ValueError):
    """The private key cannot be read (format, or a wrong or missing passphrase)."""


@dataclass(frozen=True)
class SshEndpoint:
    """Everything needed to reach one host's Docker engine. Secrets stay out of repr()."""

    host: str
    port: int
    username: str
    auth_type: str  # "key" or "password"
    docker_socket: str
    pinned_fingerprint: str = ""  # "SHA256:..." once a test succeeded; "" before
    allow_private: bool = True
    # CIDRs every address of the host must lie in (REMOTE_HOST_ALLOWED_NETWORKS); None: any.
    allowed_networks: tuple[str, ...] | None = None
    private_key: str | None = field(default=None, repr=False)
    passphrase: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    def addresses(self, port: int | None = None) -> list[str]:
        """The host's addresses, resolved now and each checked (host_addresses)."""
        return host_addresses(self.host, port or self.port, allow_private=self.allow_private,
                              allowed_networks=self.allowed_networks)


def host_addresses(host: str, port: int, *, allow_private: bool,
                   allowed_networks: tuple[str, ...] | None) -> list[str]:
    """Every address `host` resolves to, once, each passing fleet.netsafety's outbound rule and
    lying in `allowed_networks` (when given); UnsafeTarget otherwise. Connect to these, never to
    the name again: a second lookup could answer another address (DNS rebinding)."""
    within = netsafety.networks_of(tuple(allowed_networks)) if allowed_networks is not None else None
    return [str(ip) for ip in netsafety.check_host(host, port, allow_private=allow_private, within=within)]


# -- the rule a registered host's endpoint is built with ----------------------------------------


def allow_private() -> bool:
    """As adopt: paas reaches public hosts only; self-hosted also private networks. Loopback,
    link-local and metadata addresses never (unless OUTBOUND_ALLOWED_HOSTS names them)."""
    return settings.PLATFORM_MODE != "paas"


def allowed_networks() -> tuple[str, ...]:
    """REMOTE_HOST_ALLOWED_NETWORKS: every address of a host must lie in one of them."""
    return tuple(settings.REMOTE_HOST_ALLOWED_NETWORKS)
