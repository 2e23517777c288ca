"""/api/remote-hosts and /api/admin/remote-hosts without an SSH server: input rules, masked
secrets, who sees and changes what, shares, session-only, and deploys that go through the
one grant rule. (The connection test itself: test_remote_ssh.py, against a real sshd.)"""

from __future__ import annotations

import uuid

import pytest

from agents.models import Agent, WorkspaceAgent
from agents.targets.grants import target_grant_workspace_add
from agents.targets.models import RemoteHost
from tests.factories.agents import AgentFactory
from tests.factories.remote_hosts import RemoteHostFactory
from tests.infra.sshd import free_loopback_port, openssh_private_key
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOSTS = "/api/remote-hosts"
ADMIN_HOSTS = "/api/admin/remote-hosts"


@pytest.fixture
def private_key():
    return openssh_private_key()


def body(private_key, **fields) -> dict:
    return {"name": "lab", "host": "10.0.0.5", "port": 2222, "username": "deploy",
            "auth": {"type": "key", "privateKey": private_key}, "dockerSocket": "/var/run/docker.sock", **fields}


def create(client, private_key, **fields):
    return client.post(HOSTS, body(private_key, **fields), format="json")


def test_a_host_is_registered_untested_with_its_secrets_masked(tenancy, private_key):
    response = create(client_for(tenancy.editor), private_key)

    assert response.status_code == 201, response.content
    host = response.json()
    assert host["auth"] == {"type": "key", "privateKey": "[REDACTED]", "passphrase": None, "password": None}
    assert private_key not in response.content.decode()
    assert (host["status"], host["hostKeyFingerprint"], host["lastTestedAt"], host["dockerVersion"]) == (
        "untested", None, None, None)
    assert (host["scope"], host["isOwner"], host["shares"]) == ("personal", True, [])
    assert host["executionTargetId"] == f"remote:{host['id']}"
    assert (host["host"], host["port"], host["username"], host["dockerSocket"]) == (
        "10.0.0.5", 2222, "deploy", "/var/run/docker.sock")
    stored = RemoteHost.objects.get(pk=host["id"])
    assert stored.owner == tenancy.editor and stored.private_key == private_key


def test_port_and_docker_socket_have_defaults(tenancy, private_key):
    fields = body(private_key)
    del fields["port"], fields["dockerSocket"]
    host = client_for(tenancy.editor).post(HOSTS, fields, format="json").json()
    assert (host["port"], host["dockerSocket"]) == (22, "/var/run/docker.sock")


@pytest.mark.parametrize(("fields", "field"), [
    ({"host": "http://example.com"}, "host"),
    ({"host": "a host"}, "host"),
    ({"host": "127.0.0.1"}, "host"),  # loopback: the control plane's own machine
    ({"host": "169.254.169.254"}, "host"),  # cloud metadata
    ({"host": "no-such-host.invalid"}, "host"),
    ({"port": 0}, "port"),
    ({"port": 70000}, "port"),
    ({"port": "22"}, None),  # a numeric string is a number here, as everywhere in the API
    ({"username": "de ploy"}, "username"),
    ({"username": ""}, "username"),
    ({"dockerSocket": "docker.sock"}, "dockerSocket"),
    ({"dockerSocket": "/var/run/../docker.sock"}, "dockerSocket"),
    ({"auth": {"type": "key", "privateKey": "not a key"}}, "auth.privateKey"),
    ({"auth": {"type": "key"}}, "auth.privateKey"),
    ({"auth": {"type": "password"}}, "auth.password"),
    ({"auth": {"type": "kerberos", "password": "x"}}, "auth.type"),
    ({"auth": "password"}, "auth"),
    ({"auth": {"type": "password", "password": 12345678}}, "auth.password"),
    ({"name": ""}, "name"),
    ({"name": "x" * 101}, "name"),
])
def test_bad_input_is_400_naming_the_field(tenancy, private_key, fields, field):
    response = create(client_for(tenancy.editor), private_key, **fields)

    if field is None:
        assert response.status_code == 201
        return
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"], response.json()
    assert not RemoteHost.objects.exists()


def test_missing_fields_are_400(tenancy):
    response = client_for(tenancy.editor).post(HOSTS, {}, format="json")
    assert response.status_code == 400
    assert {"name", "host", "username", "auth"} <= set(response.json()["fields"])


def test_an_encrypted_key_needs_its_passphrase(tenancy):
    key = openssh_private_key(passphrase="s3cret-phrase")
    client = client_for(tenancy.editor)

    missing = create(client, key)
    assert missing.status_code == 400 and "passphrase" in missing.json()["fields"]["auth.privateKey"][0]
    wrong = create(client, key, auth={"type": "key", "privateKey": key, "passphrase": "wrong-phrase"})
    assert wrong.status_code == 400
    right = create(client, key, auth={"type": "key", "privateKey": key, "passphrase": "s3cret-phrase"})
    assert right.status_code == 201 and right.json()["auth"]["passphrase"] == "[REDACTED]"


def test_private_network_hosts_are_for_self_hosted_installations_only(tenancy, private_key, settings):
    settings.PLATFORM_MODE = "paas"
    response = create(client_for(tenancy.editor), private_key)
    assert response.status_code == 400 and "private-network" in response.json()["fields"]["host"][0]


def test_the_list_shows_own_hosts_and_hosts_shared_with_the_caller_as_editor(tenancy, private_key):
    mine = RemoteHostFactory(owner=tenancy.owner)
    shared = RemoteHostFactory(owner=tenancy.outsider)
    outsider_client = client_for(tenancy.outsider)
    outsider_client.post(f"{HOSTS}/{shared.pk}/shares/{tenancy.other_workspace.pk}")
    RemoteHostFactory(owner=tenancy.outsider)  # not shared
    target_grant_workspace_add(execution_target_id=shared.execution_target_id, workspace=tenancy.workspace)

    listed = client_for(tenancy.owner).get(HOSTS).json()
    assert {row["id"] for row in listed} == {str(mine.pk), str(shared.pk)}
    foreign = next(row for row in listed if row["id"] == str(shared.pk))
    assert (foreign["isOwner"], foreign["shares"]) == (False, [])  # who else it is shared with: the owner's
    assert client_for(tenancy.viewer).get(HOSTS).json() == []  # viewers never deploy: nothing to list
    own = next(row for row in outsider_client.get(HOSTS).json() if row["id"] == str(shared.pk))
    assert set(own["shares"]) == {str(tenancy.workspace.pk), str(tenancy.other_workspace.pk)}


def test_others_get_404_and_users_of_a_shared_host_may_not_change_it(tenancy):
    host = RemoteHostFactory(owner=tenancy.outsider)
    target_grant_workspace_add(execution_target_id=host.execution_target_id, workspace=tenancy.workspace)
    url = f"{HOSTS}/{host.pk}"

    assert client_for(tenancy.viewer).get(url).status_code == 404
    assert client_for(tenancy.platform_admin).get(url).status_code == 404  # personal: not the admin's
    editor = client_for(tenancy.editor)
    assert editor.get(url).status_code == 200
    for response in (editor.patch(url, {"name": "mine now"}, format="json"), editor.delete(url),
                     editor.post(f"{url}/test"), editor.post(f"{url}/shares/{tenancy.workspace.pk}")):
        assert (response.status_code, response.json()["code"]) == (403, "permission_denied")
    assert client_for(tenancy.owner).get(f"{HOSTS}/{uuid.uuid4()}").status_code == 404
    assert client_for(tenancy.owner).get(f"{HOSTS}/not-an-id").status_code == 404


def test_renaming_keeps_the_test_result_but_changing_the_connection_needs_a_new_test(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    client = client_for(tenancy.owner)
    url = f"{HOSTS}/{host.pk}"

    renamed = client.patch(url, {"name": "renamed"}, format="json").json()
    assert (renamed["name"], renamed["status"], renamed["hostKeyFingerprint"]) == (
        "renamed", "ready", host.host_key_fingerprint)

    new_user = client.patch(url, {"username": "other"}, format="json").json()
    assert (new_user["status"], new_user["hostKeyFingerprint"]) == ("untested", host.host_key_fingerprint)

    moved = client.patch(url, {"host": "10.0.0.9"}, format="json").json()
    assert (moved["status"], moved["hostKeyFingerprint"]) == ("untested", None)  # another machine: no pin


def test_the_mask_sent_back_keeps_the_stored_secret_and_a_new_type_needs_its_secret(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    key = host.private_key
    client = client_for(tenancy.owner)
    url = f"{HOSTS}/{host.pk}"

    kept = client.patch(url, {"auth": {"type": "key", "privateKey": "[REDACTED]"}}, format="json")
    assert kept.status_code == 200
    host.refresh_from_db()
    assert host.private_key == key

    switched = client.patch(url, {"auth": {"type": "password"}}, format="json")
    assert (switched.status_code, list(switched.json()["fields"])) == (400, ["auth.password"])
    password = client.patch(url, {"auth": {"type": "password", "password": "hunter2-but-longer"}}, format="json")
    assert password.json()["auth"] == {"type": "password", "privateKey": None, "passphrase": None,
                                       "password": "[REDACTED]"}
    host.refresh_from_db()
    assert (host.private_key, host.password) == (None, "hunter2-but-longer")


def test_only_null_is_accepted_for_the_fingerprint(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    response = client_for(tenancy.owner).patch(f"{HOSTS}/{host.pk}", {"hostKeyFingerprint": "SHA256:x"},
                                               format="json")
    assert response.status_code == 400 and "hostKeyFingerprint" in response.json()["fields"]


def test_sharing_needs_editor_in_the_workspace_and_unsharing_ends_it(tenancy):
    host = RemoteHostFactory(owner=tenancy.editor)
    client = client_for(tenancy.editor)
    url = f"{HOSTS}/{host.pk}/shares"

    shared = client.post(f"{url}/{tenancy.workspace.pk}")
    assert shared.status_code == 200 and shared.json()["shares"] == [str(tenancy.workspace.pk)]
    assert client.post(f"{url}/{tenancy.workspace.pk}").status_code == 200  # again: no change
    assert client.post(f"{url}/{tenancy.other_workspace.pk}").status_code == 404  # not a member

    viewer_host = RemoteHostFactory(owner=tenancy.viewer)
    refused = client_for(tenancy.viewer).post(f"{HOSTS}/{viewer_host.pk}/shares/{tenancy.workspace.pk}")
    assert (refused.status_code, refused.json()["code"]) == (403, "permission_denied")

    unshared = client.delete(f"{url}/{tenancy.workspace.pk}")
    assert unshared.status_code == 200 and unshared.json()["shares"] == []
    assert client.delete(f"{url}/{tenancy.workspace.pk}").status_code == 404


def test_a_key_is_refused_before_any_lookup(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    key = client_for(api_key=tenancy.key("agents:read", "agents:write", "workspaces:read"))
    calls = [key.get(HOSTS), key.post(HOSTS, {}, format="json"), key.get(f"{HOSTS}/{host.pk}"),
             key.get(f"{HOSTS}/{uuid.uuid4()}"), key.patch(f"{HOSTS}/{host.pk}", {}, format="json"),
             key.delete(f"{HOSTS}/{host.pk}"), key.post(f"{HOSTS}/{host.pk}/test"),
             key.post(f"{HOSTS}/{host.pk}/shares/{tenancy.workspace.pk}"),
             key.get(ADMIN_HOSTS), key.post(f"{ADMIN_HOSTS}/{host.pk}/test")]
    for response in calls:
        assert (response.status_code, response.json()["code"]) == (403, "session_required")


def test_a_host_with_agents_cannot_be_deleted(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    agent = AgentFactory(owner=tenancy.owner, deploy_target="remote-docker",
                         execution_target_id=host.execution_target_id)
    client = client_for(tenancy.owner)

    refused = client.delete(f"{HOSTS}/{host.pk}")
    assert (refused.status_code, refused.json()["code"]) == (409, "host_in_use")
    agent.delete()
    assert client.delete(f"{HOSTS}/{host.pk}").json() == {"success": True}
    assert not RemoteHost.objects.filter(pk=host.pk).exists()


def test_platform_hosts_and_their_grants_are_managed_by_platform_admins(tenancy, private_key):
    admin = client_for(tenancy.platform_admin)
    grants = {"allAccounts": False, "users": [str(tenancy.viewer.pk)], "workspaces": [str(tenancy.workspace.pk)]}

    created = admin.post(ADMIN_HOSTS, {**body(private_key), "grants": grants}, format="json")
    assert created.status_code == 201, created.content
    host = created.json()
    assert host["scope"] == "platform" and host["auth"]["privateKey"] == "[REDACTED]"
    assert host["grants"] == {"allAccounts": False, "users": [str(tenancy.viewer.pk)], "userGroups": [],
                              "workspaces": [str(tenancy.workspace.pk)]}
    url = f"{ADMIN_HOSTS}/{host['id']}"

    patched = admin.patch(url, {"grants": {"allAccounts": True}}, format="json").json()
    assert patched["grants"]["allAccounts"] is True and patched["grants"]["users"] == [str(tenancy.viewer.pk)]
    bad = admin.patch(url, {"grants": {"userGroups": [str(uuid.uuid4())]}}, format="json")
    assert (bad.status_code, list(bad.json()["fields"])) == (400, ["grants.userGroups"])

    personal = RemoteHostFactory(owner=tenancy.owner)
    assert [row["id"] for row in admin.get(ADMIN_HOSTS).json()] == [host["id"]]
    assert admin.get(f"{ADMIN_HOSTS}/{personal.pk}").status_code == 404
    # Granted users see a platform host in their list, read-only.
    seen = client_for(tenancy.viewer).get(HOSTS).json()
    assert [(row["id"], row["isOwner"], row["scope"]) for row in seen] == [(host["id"], False, "platform")]
    assert client_for(tenancy.viewer).patch(f"{HOSTS}/{host['id']}", {}, format="json").status_code == 403

    assert admin.delete(url).json() == {"success": True}
    assert admin.get(url).status_code == 404


def test_admin_routes_are_for_platform_admins_only(tenancy, private_key):
    for caller in (tenancy.owner, tenancy.editor):
        client = client_for(caller)
        assert client.get(ADMIN_HOSTS).status_code == 403
        assert client.post(ADMIN_HOSTS, body(private_key), format="json").status_code == 403


def test_a_failed_connection_test_is_an_answer_not_an_error(tenancy, settings, private_key):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    host = RemoteHostFactory(owner=None, host="127.0.0.1", port=free_loopback_port(), host_key_fingerprint="")

    result = client_for(tenancy.platform_admin).post(f"{ADMIN_HOSTS}/{host.pk}/test")

    assert result.status_code == 200
    assert {k: result.json()[k] for k in ("ok", "status", "code", "hostKeyFingerprint")} == {
        "ok": False, "status": "failed", "code": "unreachable", "hostKeyFingerprint": None}
    host.refresh_from_db()
    assert (host.status, host.last_tested_at is not None, bool(host.last_error)) == ("failed", True, True)


# -- deploys through the grant rule ----------------------------------------------------------------


def deploy(client, host):
    return client.post("/api/agents/deploy", {"deploy_target": "remote-docker",
                                              "execution_target_id": host.execution_target_id}, format="json")


def test_deploys_to_a_shared_host_are_for_editors_never_viewers(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    client_for(tenancy.owner).post(f"{HOSTS}/{host.pk}/shares/{tenancy.workspace.pk}")

    placed = deploy(client_for(tenancy.editor), host)
    assert placed.status_code == 201, placed.content
    agent = Agent.objects.get(pk=placed.json()["id"])
    assert (agent.owner, agent.execution_target_id) == (tenancy.editor, host.execution_target_id)
    assert not WorkspaceAgent.objects.filter(agent=agent).exists()  # rule (4): no workspace

    refused = deploy(client_for(tenancy.viewer), host)
    assert (refused.status_code, list(refused.json()["fields"])) == (400, ["execution_target_id"])
    assert deploy(client_for(tenancy.outsider), host).status_code == 400


def test_deploys_need_a_tested_host(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner, status="untested")
    refused = deploy(client_for(tenancy.owner), host)
    assert refused.status_code == 400 and "test it first" in refused.json()["error"]


def test_a_key_deploy_to_remote_docker_is_403_before_any_lookup(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    key = client_for(api_key=tenancy.key("agents:write"))
    for response in (deploy(key, host),
                     key.post("/api/agents/deploy", {"execution_target_id": f"remote:{uuid.uuid4()}"}, format="json")):
        assert (response.status_code, response.json()["code"]) == (403, "session_required")
    assert not Agent.objects.exists()
