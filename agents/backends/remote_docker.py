"""The Remote Docker backend (`remote:<host-id>`): the Docker backend, driving a host's engine
through the pinned SSH connection of agents.backends.ssh.

docker-py speaks HTTP to the engine; here every HTTP connection is one SSH channel to the host's
Docker socket, opened on the host's one signed-in transport (per process). Everything else —
lifecycle, ports, stats, exec, state files, logs, probe — is DockerBackend's, unchanged. An
unreachable host, a refused sign-in or a changed host key is BackendUnreachable (502
daemon_unreachable on requests, `error` in provisioning).
"""

from __future__ import annotations

import hashlib
import queue
import threading

import docker
import urllib3
from django.conf import settings
from docker.transport.basehttpadapter import BaseHTTPAdapter
from urllib3._collections import RecentlyUsedContainer

from fleet import netsafety

from .docker import DockerBackend
from .docker_engine import API_TIMEOUT, engine_client_builder_register, engine_client_drop
from .ssh import SshTunnel
from .ssh_endpoint import HostNotAllowed, SshEndpoint, SshFailure

BASE_URL = "http+docker://ssh"  # docker-py reads raw sockets of this base URL as SSH channels
POOL_SIZE = 10

_hosts_lock = threading.Lock()
_engine_of_host: dict[str, str] = {}  # host id -> the engine string in use for it in this process


class _ChannelConnection(urllib3.connection.HTTPConnection):
    """An HTTP connection whose socket is an SSH channel to the Docker socket."""

    def __init__(self, tunnel: SshTunnel, timeout):
        super().__init__("localhost", timeout=timeout)
        self._tunnel = tunnel

    def connect(self):
        try:
            channel = self._tunnel.channel()
        except SshFailure as exc:
            raise urllib3.exceptions.NewConnectionError(self, str(exc)) from exc
        channel.settimeout(self.timeout if isinstance(self.timeout, (int, float)) else API_TIMEOUT)
        self.sock = channel


class _ChannelPool(urllib3.connectionpool.HTTPConnectionPool):
    scheme = "ssh"

    def __init__(self, tunnel: SshTunnel, timeout, maxsize: int):
        super().__init__("localhost", timeout=timeout, maxsize=maxsize)
        self._tunnel = tunnel
        self._channel_timeout = timeout

    def _new_conn(self):
        return _ChannelConnection(self._tunnel, self._channel_timeout)

    def _get_conn(self, timeout=None):
        # As docker-py's SSH pool: urllib3's liveness check on a reused connection calls
        # fileno() on the channel, which makes a pipe per call; an idle channel is reused as is.
        conn = None
        try:
            conn = self.pool.get(block=self.block, timeout=timeout)
        except AttributeError as exc:  # the pool is closed
            raise urllib3.exceptions.ClosedPoolError(self, "Pool is closed.") from exc
        except queue.Empty:
            if self.block:
                raise urllib3.exceptions.EmptyPoolError(self, "Pool reached its maximum size.") from None
        return conn or self._new_conn()


class _TunnelAdapter(BaseHTTPAdapter):
    """requests adapter: every connection of the engine's client goes through the tunnel."""

    def __init__(self, tunnel: SshTunnel, timeout):
        self.tunnel = tunnel
        self.timeout = timeout
        self.pools = RecentlyUsedContainer(1, dispose_func=lambda pool: pool.close())
        super().__init__()

    def get_connection(self, url, proxies=None):
        with self.pools.lock:
            pool = self.pools.get(BASE_URL)
            if pool is None:
                pool = self.pools[BASE_URL] = _ChannelPool(self.tunnel, self.timeout, POOL_SIZE)
        return pool

    def request_url(self, request, proxies):
        return request.path_url  # no proxies: the channel is the route

    def close(self):
        super().close()
        self.tunnel.close()


class _SshDockerClient(docker.DockerClient):
    def __init__(self, api: docker.APIClient):  # noqa: D107 - DockerClient.__init__ builds its own APIClient
        self.api = api


def ssh_docker_client(tunnel: SshTunnel, *, timeout: float = API_TIMEOUT) -> docker.DockerClient:
    """A docker-py client of the host's engine over `tunnel`, API version negotiated with it."""
    # A fixed version skips docker-py's probe of the placeholder URL; the real one is read below.
    api = docker.APIClient(base_url="tcp://127.0.0.1:9", version=docker.constants.MINIMUM_DOCKER_API_VERSION,
                           timeout=timeout)
    api.trust_env = False
    adapter = _TunnelAdapter(tunnel, timeout)
    api.mount(BASE_URL, adapter)
    api._unmount("http://", "https://")
    api._custom_adapter = adapter
    api.base_url = BASE_URL
    try:
        api._version = api._retrieve_server_version()
    except BaseException:
        adapter.close()
        raise
    return _SshDockerClient(api)


def _engine_string(host_id: str, endpoint: SshEndpoint) -> str:
    """The `host` DockerBackend keys its client by: readable (user@host:port, whose host part is
    where the agents' gateways are reached), and new whenever a connection detail, a secret or
    the pin changes, so a stale connection is never reused. Secrets enter only through a hash."""
    material = "\0".join(
        str(part) for part in (endpoint.host, endpoint.port, endpoint.username, endpoint.auth_type,
                               endpoint.docker_socket, endpoint.pinned_fingerprint, endpoint.allow_private,
                               endpoint.allowed_networks, endpoint.private_key, endpoint.passphrase, endpoint.password)
    )
    generation = hashlib.sha256(material.encode()).hexdigest()[:16]
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"ssh://{endpoint.username}@{host}:{endpoint.port}/{host_id}/{generation}"


class RemoteDockerBackend(DockerBackend):
    """DockerBackend on a remote host's engine (docstring of the module)."""

    def __init__(self, host_id: str, endpoint: SshEndpoint):
        engine = _engine_string(host_id, endpoint)
        super().__init__(host=engine, network_mode=settings.REMOTE_DOCKER_NETWORK_MODE)
        self.endpoint = endpoint
        with _hosts_lock:
            previous = _engine_of_host.get(host_id)
            if previous != engine:
                _engine_of_host[host_id] = engine
                engine_client_builder_register(engine, lambda: ssh_docker_client(SshTunnel(endpoint)))
        if previous and previous != engine:
            engine_client_drop(previous)  # the host's details changed: drop the old connection

    @property
    def engine_is_local(self) -> bool:
        return False

    @property
    def publish_address(self) -> str:
        return settings.REMOTE_DOCKER_PUBLISH_ADDRESS

    def _gateway_host(self) -> str:
        """The address the agents' gateways are reached at: the host's name resolved now and
        checked with the host's one rule (ssh_endpoint.host_addresses), the address itself
        handed on, so nothing resolves the name again between the check and the connect (a
        rebinding to loopback gains nothing). HostNotAllowed when the rule refuses it."""
        try:
            return self.endpoint.addresses()[0]
        except netsafety.UnsafeTarget as exc:
            raise HostNotAllowed(f"The host's address is not allowed for its agents' gateways: {exc}") from None
