"""SSH to a Remote Docker host (paramiko): the pinned host key, the two ways to sign in, and
channels to the host's Docker socket.

The host key is checked before any credential is sent: a connection to a host with a pinned
fingerprint that presents another key is closed at once (HostKeyMismatch, fail closed). Only the
first successful test of a host may connect without a pin (`require_pin=False`), and what it
saw is what gets pinned. The address is checked at every connect (ssh_endpoint.host_addresses:
fleet.netsafety's rule and REMOTE_HOST_ALLOWED_NETWORKS) and the socket goes to exactly the
checked address (no DNS rebinding between check and connect).

Docker is reached through OpenSSH's stream-local forwarding (`direct-streamlocal@openssh.com`,
on by default in sshd: AllowStreamLocalForwarding), so the host needs nothing but sshd and the
engine's socket, which the SSH user must be allowed to open (root, or a member of the group
that owns the socket, usually `docker`).
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import socket
import threading

import paramiko

from fleet import netsafety

from .ssh_endpoint import (
    AuthenticationFailed,
    DockerSocketRefused,
    HostKeyMismatch,
    HostNotAllowed,
    HostNotPinned,
    HostUnreachable,
    InvalidPrivateKey,
    SshEndpoint,
    SshFailure,
)

CONNECT_TIMEOUT = 10.0  # seconds for TCP, the SSH handshake, and signing in
CHANNEL_TIMEOUT = 10.0  # seconds for the host to open a channel to the Docker socket
KEEPALIVE = 30  # seconds between keepalives on an idle connection
STREAMLOCAL = "direct-streamlocal@openssh.com"
KEY_CLASSES = (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey)

# paramiko logs every failed handshake with a traceback at ERROR; ours are reported to the caller.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)


def host_key_fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH's SHA256 fingerprint: `SHA256:<base64 without padding>`."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def load_private_key(text: str, passphrase: str | None = None) -> paramiko.PKey:
    """The key in `text` (OpenSSH or PEM: Ed25519, ECDSA, RSA), or InvalidPrivateKey."""
    needs_passphrase = False
    for key_class in KEY_CLASSES:
        try:
            return key_class.from_private_key(io.StringIO(text), password=passphrase or None)
        except paramiko.PasswordRequiredException:
            needs_passphrase = True
        except (paramiko.SSHException, ValueError, TypeError, IndexError, AssertionError):
            continue
    if needs_passphrase:
        raise InvalidPrivateKey("The private key is encrypted: give its passphrase.")
    raise InvalidPrivateKey("The private key cannot be read (OpenSSH or PEM Ed25519, ECDSA or RSA), "
                            "or the passphrase is wrong.")


class StreamLocalTransport(paramiko.Transport):
    """paramiko's Transport plus channels to a Unix socket on the server
    (`direct-streamlocal@openssh.com`, OpenSSH's PROTOCOL 2.4), which paramiko's open_channel
    cannot address: the socket path is appended to the open message as it is sent."""

    def __init__(self, sock):
        super().__init__(sock)
        self._pending_socket_path = threading.local()

    def open_socket_channel(self, path: str, *, timeout: float = CHANNEL_TIMEOUT) -> paramiko.Channel:
        self._pending_socket_path.value = path
        try:
            return self.open_channel(STREAMLOCAL, timeout=timeout)
        finally:
            self._pending_socket_path.value = None

    def _send_user_message(self, data):
        path = getattr(self._pending_socket_path, "value", None)
        if path is not None and isinstance(data, paramiko.Message):
            # The CHANNEL_OPEN that open_channel just built in this thread: socket path,
            # reserved string, reserved uint32 (the fields paramiko knows nothing of).
            self._pending_socket_path.value = None
            data.add_string(path)
            data.add_string("")
            data.add_int(0)
        super()._send_user_message(data)


def _dial(endpoint: SshEndpoint) -> socket.socket:
    try:
        addresses = endpoint.addresses()
    except netsafety.UnsafeTarget as exc:
        raise HostNotAllowed(str(exc)) from None
    last_error: OSError | None = None
    for address in addresses:
        try:
            return socket.create_connection((address, endpoint.port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            last_error = exc
    raise HostUnreachable(f"{endpoint.host}:{endpoint.port} cannot be reached ({last_error}).")


def _sign_in(transport: paramiko.Transport, endpoint: SshEndpoint) -> None:
    try:
        if endpoint.auth_type == "key":
            try:
                key = load_private_key(endpoint.private_key or "", endpoint.passphrase)
            except InvalidPrivateKey as exc:
                raise AuthenticationFailed(str(exc)) from None
            transport.auth_publickey(endpoint.username, key)
        else:
            transport.auth_password(endpoint.username, endpoint.password or "")
    except paramiko.AuthenticationException:
        raise AuthenticationFailed(
            f"The host refused the {'key' if endpoint.auth_type == 'key' else 'password'} "
            f"of {endpoint.username!r}."
        ) from None
    if not transport.is_authenticated():
        raise AuthenticationFailed(f"The host did not accept {endpoint.username!r}.")


def ssh_connect(endpoint: SshEndpoint, *, require_pin: bool = True) -> tuple[StreamLocalTransport, str]:
    """A signed-in transport and the host key's fingerprint. With a pin, any other host key is
    HostKeyMismatch before credentials are sent; without one, `require_pin` refuses to connect."""
    if require_pin and not endpoint.pinned_fingerprint:
        raise HostNotPinned("The host has no pinned host key yet: test the host first.")
    sock = _dial(endpoint)
    transport = StreamLocalTransport(sock)
    transport.banner_timeout = transport.auth_timeout = transport.handshake_timeout = CONNECT_TIMEOUT
    try:
        try:
            transport.start_client(timeout=CONNECT_TIMEOUT)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise HostUnreachable(f"No SSH handshake with {endpoint.host}:{endpoint.port} ({exc}).") from None
        fingerprint = host_key_fingerprint(transport.get_remote_server_key())
        if endpoint.pinned_fingerprint and fingerprint != endpoint.pinned_fingerprint:
            raise HostKeyMismatch(
                f"host_key_mismatch: {endpoint.host}:{endpoint.port} presented the host key {fingerprint}, "
                f"not the pinned {endpoint.pinned_fingerprint}; refusing to connect."
            )
        try:
            _sign_in(transport, endpoint)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if isinstance(exc, SshFailure):
                raise
            raise HostUnreachable(f"Signing in to {endpoint.host}:{endpoint.port} failed ({exc}).") from None
        transport.set_keepalive(KEEPALIVE)
        return transport, fingerprint
    except BaseException:
        transport.close()
        raise


class SshTunnel:
    """One signed-in connection to a host (made on first use, made again when it dropped),
    handing out channels to its Docker socket. Thread-safe; one per host and process."""

    def __init__(self, endpoint: SshEndpoint, *, require_pin: bool = True):
        self.endpoint = endpoint
        self._require_pin = require_pin
        self._transport: StreamLocalTransport | None = None
        self._lock = threading.Lock()
        self.fingerprint = ""

    def _live_transport(self, *, fresh: bool = False) -> StreamLocalTransport:
        with self._lock:
            if fresh or self._transport is None or not self._transport.is_active():
                if self._transport is not None:
                    self._transport.close()
                self._transport = None
                self._transport, self.fingerprint = ssh_connect(self.endpoint, require_pin=self._require_pin)
            return self._transport

    def channel(self) -> paramiko.Channel:
        """A new channel to the Docker socket (a dropped connection is made again once)."""
        for attempt in (1, 2):
            transport = self._live_transport(fresh=attempt == 2)
            try:
                return transport.open_socket_channel(self.endpoint.docker_socket)
            except paramiko.ChannelException as exc:
                raise DockerSocketRefused(
                    f"The host would not open the Docker socket {self.endpoint.docker_socket} for "
                    f"{self.endpoint.username!r} ({exc.text or exc}); check the path, that the user may use "
                    "it, and that sshd allows stream-local forwarding."
                ) from None
            except (paramiko.SSHException, EOFError, OSError) as exc:
                if attempt == 2 or transport.is_active():
                    raise HostUnreachable(f"The SSH connection to {self.endpoint.host} failed ({exc}).") from None
        raise HostUnreachable(f"The SSH connection to {self.endpoint.host} failed.")  # not reached

    def close(self) -> None:
        with self._lock:
            if self._transport is not None:
                self._transport.close()
            self._transport = None
