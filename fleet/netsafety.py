"""Outbound safety: the SSRF guard for every request to a user-supplied host or URL.

Webhook URLs, adopted runtime endpoints and integration endpoints must not reach the
control plane's own neighbourhood. `check_host()` resolves a host and refuses loopback,
private, link-local, multicast, reserved, unspecified, other non-global and cloud
metadata addresses. `allow_private=True` (self-hosted adopt) permits the private-network
ranges (RFC 1918, IPv6 ULA, CGNAT) but never loopback, link-local or metadata: loopback is
not a private-network endpoint. Only settings.OUTBOUND_ALLOWED_HOSTS (host names, "*.suffix"
or ".suffix" wildcards, IP addresses or CIDRs) exempts a target from every rule.

Check on save with `check_url()`/`check_host()`, then send with `safe_session()`: its
connections resolve the host once, validate every address, and connect to exactly that
address (so DNS rebinding between check and connect gains nothing), while TLS SNI,
certificate checks and the Host header keep using the name. Redirects (at most 3) are
checked the same way; environment proxies are ignored and explicit proxies refused,
because a proxy would connect on our behalf unchecked (REQUESTS_CA_BUNDLE still applies).
Every request has a timeout (settings.OUTBOUND_TIMEOUT_SECONDS unless the caller passes one).

`parse_port_ranges()`/`port_allowed()` read settings.GATEWAY_ALLOWED_PORTS
("18789,9119,19000-19999,30000-32767") for adopted gateway ports.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from requests.adapters import HTTPAdapter
from requests.utils import select_proxy
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_REDIRECTS = 3

# Instance metadata services: AWS/GCP/Azure/Oracle/DigitalOcean, AWS ECS task metadata,
# AWS over IPv6, Alibaba Cloud. Refused even where private ranges are allowed.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "169.254.169.123", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTNAMES = frozenset({"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"})

# What allow_private opens: the private-network ranges a self-hosted fleet lives in.
PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# IPv6 forms that carry an IPv4 address some relay may deliver to: 6to4, Teredo, NAT64 local
# use, IPv4-compatible (deprecated). Refused whatever address they carry: a webhook has no
# business there, and checking the embedded address would trust the relay's routing.
_EMBEDDED_IPV4_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("2002::/16", "2001::/32", "64:ff9b:1::/48", "::/96")
)


class UnsafeTarget(ValueError):
    """The host or URL is not an allowed outbound destination (the message says why)."""


# --- Hosts and addresses --------------------------------------------------------------------


def _normalise_host(host: str) -> str:
    host = (host or "").strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host.rstrip(".").lower()


def _embedded_ipv4(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one stands for (::ffff:a.b.c.d, 64:ff9b::a.b.c.d), else ip."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return ip.ipv4_mapped
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


@lru_cache(maxsize=16)
def _allow_list(entries: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], tuple]:
    """(exact names, wildcard suffixes, networks) from OUTBOUND_ALLOWED_HOSTS."""
    names, suffixes, networks = set(), [], []
    for entry in (_normalise_host(e) for e in entries):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
            continue
        except ValueError:
            pass
        if entry.startswith("*."):
            suffixes.append(entry[1:])
        elif entry.startswith("."):
            suffixes.append(entry)
        else:
            names.add(entry)
    return frozenset(names), tuple(suffixes), tuple(networks)


def _allowed_entries() -> tuple[frozenset[str], tuple[str, ...], tuple]:
    return _allow_list(tuple(getattr(settings, "OUTBOUND_ALLOWED_HOSTS", ()) or ()))


def host_is_allowlisted(host: str) -> bool:
    names, suffixes, _ = _allowed_entries()
    host = _normalise_host(host)
    return host in names or any(host.endswith(s) for s in suffixes)


def address_is_allowlisted(ip: IPAddress) -> bool:
    _, _, networks = _allowed_entries()
    candidates = {ip, _embedded_ipv4(ip)}
    return any(c.version == n.version and c in n for c in candidates for n in networks)


def address_risk(ip: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why `ip` is refused as an outbound destination, or None when it is fine."""
    if (
        isinstance(ip, ipaddress.IPv6Address)
        and not (ip.is_loopback or ip.is_unspecified)
        and any(ip in network for network in _EMBEDDED_IPV4_NETWORKS)
    ):
        return "an IPv6 transition address embedding IPv4 (6to4, Teredo or the like)"
    ip = _embedded_ipv4(ip)
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_reserved:
        return "a reserved address"
    if any(ip.version == n.version and ip in n for n in PRIVATE_NETWORKS):
        return None if allow_private else "a private-network address"
    if not ip.is_global:
        return "a non-public address"
    return None


def resolve(host: str, port: int | None = None) -> list[IPAddress]:
    """Every address `host` resolves to, in resolver order, without duplicates."""
    try:
        infos = socket.getaddrinfo(host, port or 0, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnsafeTarget(f"The host {host!r} could not be resolved.") from exc
    addresses: list[IPAddress] = []
    for *_, sockaddr in infos:
        ip = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])  # drop an IPv6 zone id
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise UnsafeTarget(f"The host {host!r} could not be resolved.")
    return addresses


@lru_cache(maxsize=16)
def networks_of(entries: tuple[str, ...]) -> tuple:
    """("10.0.0.0/8", "fd00::/8") -> the networks; ValueError when one is malformed."""
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def _outside(ip: IPAddress, networks: tuple) -> bool:
    candidates = {ip, _embedded_ipv4(ip)}
    return not any(c.version == n.version and c in n for c in candidates for n in networks)


def check_host(host: str, port: int | None = None, *, allow_private: bool = False,
               within: tuple | None = None) -> list[IPAddress]:
    """Resolve `host` and return its addresses, or raise UnsafeTarget if any is refused.

    Every address must pass: a name with one public and one loopback record is refused.
    `within` (networks_of()) narrows further: every address must also lie in one of those
    networks, allow-listed or not (an operator's limit for one kind of target).
    """
    addresses = _check_host(host, port, allow_private=allow_private)
    if within is not None:
        for ip in addresses:
            if _outside(ip, within):
                name = _normalise_host(host)
                shown = name if name == str(ip) else f"{name!r} resolves to {ip}, which"
                raise UnsafeTarget(f"The host {shown} is outside the networks allowed for it.")
    return addresses


def _check_host(host: str, port: int | None, *, allow_private: bool) -> list[IPAddress]:
    name = _normalise_host(host)
    if not name:
        raise UnsafeTarget("A host is required.")
    if port is not None:
        try:
            port = int(port)
        except (TypeError, ValueError):
            raise UnsafeTarget(f"The port {port!r} is not a number.") from None
        if not 0 < port < 65536:
            raise UnsafeTarget(f"The port {port} is out of range.")
    if host_is_allowlisted(name):
        return resolve(name, port)
    if name in METADATA_HOSTNAMES:
        raise UnsafeTarget(f"The host {name!r} is a cloud metadata service.")
    addresses = resolve(name, port)
    for ip in addresses:
        if address_is_allowlisted(ip):
            continue
        risk = address_risk(ip, allow_private=allow_private)
        if risk:
            shown = name if name == str(ip) else f"{name!r} resolves to {ip}, which"
            raise UnsafeTarget(f"The host {shown} is {risk}; outbound requests there are refused.")
    return addresses


def _split_url(url: str) -> SplitResult:
    """The URL's parts if it is shaped like an allowed target (no resolution yet)."""
    if not isinstance(url, str) or not url.strip():
        raise UnsafeTarget("A URL is required.")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise UnsafeTarget("The URL must not contain spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget(f"The URL is malformed: {exc}.") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise UnsafeTarget("Only http and https URLs are allowed.")
    if not parts.hostname:
        raise UnsafeTarget("The URL needs a host.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeTarget("The URL must not carry credentials.")
    if port == 0:
        raise UnsafeTarget("The URL's port is out of range.")
    return parts


def check_url(url: str, *, allow_private: bool = False) -> SplitResult:
    """Validate an http(s) URL and its host; returns the split URL or raises UnsafeTarget."""
    parts = _split_url(url)
    default_port = 443 if parts.scheme.lower() == "https" else 80
    check_host(parts.hostname, parts.port or default_port, allow_private=allow_private)
    return parts


# --- Ports ----------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def parse_port_ranges(spec: str) -> tuple[tuple[int, int], ...]:
    """"18789,19000-19999" -> ((18789, 18789), (19000, 19999)); ValueError when malformed."""
    ranges = []
    for item in (part.strip() for part in (spec or "").split(",")):
        if not item:
            continue
        low, sep, high = item.partition("-")
        try:
            lo, hi = int(low), int(high) if sep else int(low)
        except ValueError:
            raise ValueError(f"Bad port range {item!r}; use e.g. '18789' or '19000-19999'.") from None
        if not 0 < lo <= hi < 65536:
            raise ValueError(f"Bad port range {item!r}; ports are 1 to 65535, low to high.")
        ranges.append((lo, hi))
    return tuple(ranges)


def port_allowed(port: int, spec: str | None = None) -> bool:
    """Whether `port` is in `spec` (default: settings.GATEWAY_ALLOWED_PORTS)."""
    spec = settings.GATEWAY_ALLOWED_PORTS if spec is None else spec
    try:
        ranges = parse_port_ranges(spec)
    except ValueError as exc:
        raise ImproperlyConfigured(f"GATEWAY_ALLOWED_PORTS: {exc}") from None
    try:
        port = int(port)
    except (TypeError, ValueError):
        return False
    return any(lo <= port <= hi for lo, hi in ranges)


# --- The safe HTTP session -------------------------------------------------------------------


class _GuardedConnectionMixin:
    """Resolve once, validate every address, connect to exactly the validated address."""

    allow_private = False

    def _new_conn(self):
        addresses = check_host(self._dns_host, self.port, allow_private=self.allow_private)
        error: Exception | None = None
        for ip in addresses:
            try:
                sock = urllib3_connection.create_connection(
                    (str(ip), self.port),
                    self.timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except TimeoutError as exc:
                error = ConnectTimeoutError(
                    self, f"Connection to {self.host} timed out. (connect timeout={self.timeout})"
                )
                error.__cause__ = exc
            except OSError as exc:
                error = NewConnectionError(self, f"Failed to establish a new connection: {exc}")
                error.__cause__ = exc
            else:
                return sock
        raise error


@lru_cache(maxsize=2)
def _pool_classes(allow_private: bool) -> dict[str, type]:
    def guarded(base, pool):
        conn_cls = type(f"Guarded{base.__name__}", (_GuardedConnectionMixin, base), {"allow_private": allow_private})
        return type(f"Guarded{pool.__name__}", (pool,), {"ConnectionCls": conn_cls})

    return {"http": guarded(HTTPConnection, HTTPConnectionPool), "https": guarded(HTTPSConnection, HTTPSConnectionPool)}


class SafeAdapter(HTTPAdapter):
    __attrs__ = [*HTTPAdapter.__attrs__, "allow_private"]  # kept when pickled

    def __init__(self, *, allow_private: bool = False, **kwargs):
        self.allow_private = allow_private
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self.allow_private)

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        _split_url(request.url)  # scheme, credentials, host: also for every redirect
        if proxies and select_proxy(request.url, proxies):
            raise UnsafeTarget("Proxies are not allowed for outbound requests to user-supplied targets.")
        if timeout is None:
            timeout = settings.OUTBOUND_TIMEOUT_SECONDS
        return super().send(request, stream=stream, timeout=timeout, verify=verify, cert=cert, proxies=None)


class SafeSession(requests.Session):
    def __init__(self, *, allow_private: bool = False):
        super().__init__()
        self.trust_env = False  # no environment proxies or .netrc credentials...
        # ...but an operator's CA bundle (an internal CA for self-hosted endpoints) still counts.
        self.verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
        self.max_redirects = MAX_REDIRECTS
        adapter = SafeAdapter(allow_private=allow_private)
        self.adapters.clear()
        self.mount("https://", adapter)
        self.mount("http://", adapter)


def safe_session(*, allow_private: bool = False) -> requests.Session:
    """A requests session for user-supplied targets; refused targets raise UnsafeTarget."""
    return SafeSession(allow_private=allow_private)
