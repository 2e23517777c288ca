"""What names a Remote Docker host's SSH connection and how it fails, without paramiko.

agents.backends.ssh opens the connections (paramiko, about 30 MB in a process); the web process
needs only these to validate and describe hosts, and imports ssh when it connects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    private_key: str | None = field(default=None, repr=False)
    passphrase: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
