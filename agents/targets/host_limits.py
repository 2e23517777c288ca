"""What keeps Remote Docker hosts from being a port scanner or an SSH password guesser:
who may register personal hosts (REMOTE_HOSTS_ENABLED_FOR), and how often hosts may be tested
or have how they are reached changed (address, user, credentials): per acting user, and per
target address (`host:port`, whoever's rows name it, so many rows or many accounts against one
machine share one budget). Where hosts may be is ssh_endpoint.host_addresses' rule.

The throttles refuse (503) when the cache is away: they guard against guessing."""

from __future__ import annotations

import hashlib

from django.conf import settings

from fleet import netsafety
from fleet.api.throttling import throttle
from fleet.errors import Forbidden

# Request fields of a PATCH that change how a host is reached (a credential or address change).
CONNECTION_INPUT = ("host", "port", "username", "auth", "dockerSocket")


class HostsNotEnabled(Forbidden):
    default_message = "Only platform admins may register or change Remote Docker hosts on this server."


def may_register_hosts(user) -> bool:
    return settings.REMOTE_HOSTS_ENABLED_FOR == "all" or bool(getattr(user, "is_platform_admin", False))


def require_host_registration(user) -> None:
    """403 unless `user` may register personal hosts here (REMOTE_HOSTS_ENABLED_FOR)."""
    if not may_register_hosts(user):
        raise HostsNotEnabled()


def _addresses(host, port) -> list[str]:
    """`address:port` keys of the machine a host names: the addresses it resolves to, so other
    spellings of one address (`127.1`, a name pointing there) share its budget; the name as
    given when it does not resolve."""
    name = str(host or "").strip().strip("[]").rstrip(".").lower()
    try:
        found = [str(ip) for ip in netsafety.resolve(name, port)] if name else []
    except netsafety.UnsafeTarget:
        found = []
    if not found:  # a cache key of any characters the name has: a digest of it
        found = ["name-" + hashlib.sha256(name.encode()).hexdigest()[:32]]
    return [f"{address}:{port or 22}" for address in found]


def count_test(user, host) -> None:
    """One connection test of `host` (a RemoteHost) by `user`; 429 rate_limited when over."""
    throttle("remote_host_test_user", user.pk, settings.REMOTE_HOST_TEST_RATE_PER_USER)
    for key in _addresses(host.host, host.port):
        throttle("remote_host_test_address", key, settings.REMOTE_HOST_TEST_RATE_PER_ADDRESS)


def count_change(user, host, port) -> None:
    """One registration of, or change to how `user` reaches, the host at `host`:`port`."""
    throttle("remote_host_change_user", user.pk, settings.REMOTE_HOST_CHANGE_RATE_PER_USER)
    for key in _addresses(host, port):
        throttle("remote_host_change_address", key, settings.REMOTE_HOST_CHANGE_RATE_PER_ADDRESS)


def changes_connection(data: dict) -> bool:
    """Whether a request body changes how a host is reached."""
    return any(name in data for name in CONNECTION_INPUT)
