"""With open signup any user could register any private address and port as a
Remote Docker host, then PATCH its password and POST /test without limit, the answer's code
(`unreachable`, `auth_failed`, ok) an oracle: a port scanner and an SSH password guesser.
Tests and changes of how a host is reached are throttled per user and per target address;
operators may keep hosts to platform admins (REMOTE_HOSTS_ENABLED_FOR) and to networks
(REMOTE_HOST_ALLOWED_NETWORKS), checked at registration and at every connection."""

from __future__ import annotations

import pytest

from tests.factories.remote_hosts import RemoteHostFactory
from tests.infra.sshd import free_loopback_port, openssh_private_key
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOSTS = "/api/remote-hosts"


def _body(host="127.0.0.1", port=None, **fields) -> dict:
    return {"name": "scan", "host": host, "port": port or free_loopback_port(), "username": "root",
            "auth": {"type": "password", "password": "guess-1"}, **fields}


def _create(client, **fields) -> dict:
    answer = client.post(HOSTS, _body(**fields), format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def _throttled(answer) -> None:
    assert answer.status_code == 429, answer.content
    assert answer.json()["code"] == "rate_limited" and int(answer["Retry-After"]) >= 1


class TestThrottles:
    def test_tests_are_throttled_per_user(self, tenancy, settings):
        settings.REMOTE_HOST_TEST_RATE_PER_USER = "2/1h"
        client = client_for(tenancy.editor)
        hosts = [_create(client) for _ in range(3)]  # three closed loopback ports: a port scan
        for host in hosts[:2]:
            answer = client.post(f"{HOSTS}/{host['id']}/test")
            assert answer.status_code == 200 and answer.json()["code"] == "unreachable", answer.content
        _throttled(client.post(f"{HOSTS}/{hosts[2]['id']}/test"))

    def test_tests_are_throttled_per_address_across_users_and_spellings(self, tenancy, settings):
        settings.REMOTE_HOST_TEST_RATE_PER_ADDRESS = "2/15m"
        port = free_loopback_port()
        mine = _create(client_for(tenancy.editor), port=port)
        theirs = _create(client_for(tenancy.outsider), port=port, host="127.1")  # another spelling, another account
        assert client_for(tenancy.editor).post(f"{HOSTS}/{mine['id']}/test").status_code == 200
        assert client_for(tenancy.outsider).post(f"{HOSTS}/{theirs['id']}/test").status_code == 200
        _throttled(client_for(tenancy.outsider).post(f"{HOSTS}/{theirs['id']}/test"))
        other_port = _create(client_for(tenancy.outsider))
        assert client_for(tenancy.outsider).post(f"{HOSTS}/{other_port['id']}/test").status_code == 200

    def test_credential_changes_are_throttled_per_user(self, tenancy, settings):
        settings.REMOTE_HOST_CHANGE_RATE_PER_USER = "3/1h"
        client = client_for(tenancy.editor)
        host = _create(client)  # a registration counts
        for guess in ("guess-2", "guess-3"):
            answer = client.patch(f"{HOSTS}/{host['id']}", {"auth": {"password": guess}}, format="json")
            assert answer.status_code == 200
        _throttled(client.patch(f"{HOSTS}/{host['id']}", {"auth": {"password": "guess-4"}}, format="json"))
        _throttled(client.post(HOSTS, _body(), format="json"))  # a new row is no way around it
        assert client.patch(f"{HOSTS}/{host['id']}", {"name": "renamed"}, format="json").status_code == 200

    def test_credential_changes_are_throttled_per_address(self, tenancy, settings):
        settings.REMOTE_HOST_CHANGE_RATE_PER_ADDRESS = "2/1h"
        port = free_loopback_port()
        host = _create(client_for(tenancy.editor), port=port)
        assert client_for(tenancy.editor).patch(f"{HOSTS}/{host['id']}", {"auth": {"password": "g2"}},
                                                format="json").status_code == 200
        _throttled(client_for(tenancy.outsider).post(HOSTS, _body(port=port), format="json"))

    def test_a_platform_hosts_tests_are_throttled_too(self, tenancy, settings):
        settings.REMOTE_HOST_TEST_RATE_PER_ADDRESS = "1/15m"
        host = RemoteHostFactory(owner=None, host="127.0.0.1", port=free_loopback_port())
        admin = client_for(tenancy.platform_admin)
        assert admin.post(f"/api/admin/remote-hosts/{host.pk}/test").status_code == 200
        _throttled(admin.post(f"/api/admin/remote-hosts/{host.pk}/test"))


class TestWhoMayRegister:
    def test_by_default_every_user_may_register_a_host(self, tenancy):
        _create(client_for(tenancy.viewer))

    def test_admins_only_keeps_users_from_registering_changing_and_testing(self, tenancy, settings):
        host = RemoteHostFactory(owner=tenancy.editor, host="127.0.0.1", port=free_loopback_port())
        settings.REMOTE_HOSTS_ENABLED_FOR = "admins"
        client = client_for(tenancy.editor)

        refused = [client.post(HOSTS, _body(), format="json"),
                   client.patch(f"{HOSTS}/{host.pk}", {"auth": {"type": "password", "password": "guess-2"}},
                                format="json"),
                   client.patch(f"{HOSTS}/{host.pk}", {"port": 2200}, format="json"),
                   client.post(f"{HOSTS}/{host.pk}/test")]
        for answer in refused:
            assert answer.status_code == 403 and answer.json()["code"] == "permission_denied", answer.content
        host.refresh_from_db()
        assert host.auth_type == "key" and not host.password and host.last_tested_at is None
        # What is theirs stays theirs to see, rename and remove.
        assert client.get(f"{HOSTS}/{host.pk}").status_code == 200
        assert client.patch(f"{HOSTS}/{host.pk}", {"name": "old"}, format="json").status_code == 200
        assert client.delete(f"{HOSTS}/{host.pk}").status_code == 200

    def test_admins_only_still_lets_a_platform_admin_register(self, tenancy, settings):
        settings.REMOTE_HOSTS_ENABLED_FOR = "admins"
        _create(client_for(tenancy.platform_admin))


class TestAllowedNetworks:
    def test_the_default_keeps_private_networks_open_self_hosted(self, tenancy):
        _create(client_for(tenancy.editor), host="192.168.50.7", port=22)

    def test_a_host_outside_the_networks_is_refused_at_registration(self, tenancy, settings):
        settings.REMOTE_HOST_ALLOWED_NETWORKS = ["10.0.0.0/8"]
        client = client_for(tenancy.editor)
        for host in ("192.168.50.7", "127.0.0.1", "localhost"):  # loopback is allow-listed here: still outside
            answer = client.post(HOSTS, _body(host=host, port=22), format="json")
            assert answer.status_code == 400 and "host" in answer.json()["fields"], answer.content
        _create(client, host="10.1.2.3", port=22)

    def test_a_stored_host_outside_the_networks_is_refused_at_connect_time(self, tenancy, settings):
        host = _create(client_for(tenancy.editor))
        settings.REMOTE_HOST_ALLOWED_NETWORKS = ["10.0.0.0/8"]  # narrowed after it was registered
        answer = client_for(tenancy.editor).post(f"{HOSTS}/{host['id']}/test")
        assert answer.status_code == 200 and answer.json()["code"] == "host_not_allowed", answer.content


def test_the_password_in_a_refused_change_is_not_stored(tenancy, settings):
    settings.REMOTE_HOST_CHANGE_RATE_PER_USER = "1/1h"
    client = client_for(tenancy.editor)
    host = _create(client, auth={"type": "key", "privateKey": openssh_private_key()})
    _throttled(client.patch(f"{HOSTS}/{host['id']}", {"auth": {"type": "password", "password": "g"}}, format="json"))
    assert client.get(f"{HOSTS}/{host['id']}").json()["auth"]["type"] == "key"
