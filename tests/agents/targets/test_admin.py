"""The admin console for registered targets: hosts with their status, never a secret, the test
action through the same service as the API, deletes that refuse hosts in use; grants; groups."""

from __future__ import annotations

import pytest

from accounts.groups import user_group_create
from agents.targets.models import RemoteHost, TargetGrant
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory
from tests.factories.remote_hosts import RemoteHostFactory
from tests.infra.sshd import free_loopback_port, openssh_private_key

pytestmark = pytest.mark.django_db

HOSTS = "/admin/targets/remotehost/"


def test_hosts_are_listed_with_their_status_and_no_secret(console):
    host = RemoteHostFactory(name="gpu-box", password="a-password-1234", auth_type="password", private_key=None)
    key_host = RemoteHostFactory(name="key-box", passphrase="phrase-5678")

    listing = console.get(HOSTS).content.decode()
    assert "gpu-box" in listing and "ready" in listing and host.owner.email in listing
    for shown in (host, key_host):
        page = console.get(f"{HOSTS}{shown.pk}/change/").content.decode()
        assert shown.host_key_fingerprint in page
        for secret in (shown.private_key, shown.passphrase, shown.password):
            assert not secret or secret not in page
    for field in ("ssh_private_key", "ssh_passphrase", "ssh_password"):
        assert f'name="{field}"' in page and f'name="{field}" value=' not in page


def _host_form(**fields) -> dict:
    return {"name": "build-box", "host": "127.0.0.1", "port": "2222", "username": "fleet",
            "docker_socket": "/var/run/docker.sock", "auth_type": "key", "ssh_private_key": "", "ssh_passphrase": "",
            "ssh_password": "", **fields}


def test_an_operator_registers_a_platform_host_with_a_key_that_is_never_shown(console, settings, platform_admin):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    private_key = openssh_private_key()

    added = console.post(f"{HOSTS}add/", _host_form(ssh_private_key=private_key))

    assert added.status_code == 302, added.content.decode()[-3000:]
    host = RemoteHost.objects.get(name="build-box")
    assert (host.owner_id, host.port, host.auth_type, host.status) == (None, 2222, "key", "untested")
    assert host.private_key == private_key  # stored, encrypted at rest by its field
    page = console.get(f"{HOSTS}{host.pk}/change/").content.decode()
    assert private_key.splitlines()[1] not in page

    renamed = console.post(f"{HOSTS}{host.pk}/change/", _host_form(name="build-box-2"))

    assert renamed.status_code == 302, renamed.content.decode()[-3000:]
    host.refresh_from_db()
    assert (host.name, host.private_key) == ("build-box-2", private_key)  # the empty field kept the key


def test_the_routes_checks_refuse_a_host_on_its_fields(console, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    refusals = {
        "no_key": (_host_form(), "ssh_private_key", "A private key is required"),
        "bad_key": (_host_form(ssh_private_key="not a key"), "ssh_private_key", ""),
        "bad_port": (_host_form(port="70000", ssh_private_key=openssh_private_key()), "port",
                     "Give a port from 1 to 65535"),
        "no_password": (_host_form(auth_type="password"), "ssh_password", "A password is required"),
        "metadata_address": (_host_form(host="169.254.169.254", ssh_private_key=openssh_private_key()), "host", ""),
    }

    for name, (form, field, message) in refusals.items():
        page = console.post(f"{HOSTS}add/", form).content.decode()
        assert f'id="id_{field}_error"><li>{message}' in page, name

    assert not RemoteHost.objects.exists()


def test_the_test_action_runs_the_connection_test(console, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    host = RemoteHostFactory(host="127.0.0.1", port=free_loopback_port(), status="untested")

    response = console.post(HOSTS, {"action": "test_connection", "_selected_action": [host.pk]}, follow=True)

    assert "cannot be reached" in response.content.decode()
    host.refresh_from_db()
    assert (host.status, host.last_tested_at is not None) == ("failed", True)


def test_a_host_in_use_is_not_deleted(console):
    host = RemoteHostFactory()
    AgentFactory(owner=host.owner, deploy_target="remote-docker", execution_target_id=host.execution_target_id)
    free = RemoteHostFactory()

    console.post(f"{HOSTS}{host.pk}/delete/", {"post": "yes"}, follow=True)
    console.post(f"{HOSTS}{free.pk}/delete/", {"post": "yes"}, follow=True)

    assert list(RemoteHost.objects.values_list("pk", flat=True)) == [host.pk]


def test_grants_and_groups_are_managed_in_the_console(console):
    user = UserFactory(email="granted@example.com")
    group = user_group_create(name="night shift", member_ids=[str(user.pk)])

    added = console.post("/admin/targets/targetgrant/add/", {"execution_target_id": "proxmox", "kind": "user_group",
                                                             "group": str(group.pk)}, follow=True)
    assert added.status_code == 200
    assert TargetGrant.objects.filter(execution_target_id="proxmox", group=group).exists()
    mismatched = console.post("/admin/targets/targetgrant/add/", {"execution_target_id": "proxmox", "kind": "user"})
    assert mismatched.status_code == 200 and TargetGrant.objects.count() == 1  # the form shows the error

    groups = console.get("/admin/accounts/usergroup/").content.decode()
    assert "night shift" in groups
    assert "granted@example.com" in console.get(f"/admin/accounts/usergroup/{group.pk}/change/").content.decode()
