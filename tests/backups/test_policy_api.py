"""GET/PUT/DELETE /api/agents/:id/backup-policy: the schedule, the retention and the policy's own
S3 destination, whose credentials are stored encrypted and never read back."""

from __future__ import annotations

import pytest
from django.db import connection

from backups.models import BackupPolicy

pytestmark = pytest.mark.django_db

S3 = {"url": "http://127.0.0.1:9000/bucket/team-a", "accessKeyId": "AKIAPOLICYKEY0001",
      "secretAccessKey": "policy-secret-access-key-0123456789"}


def _url(agent) -> str:
    return f"/api/agents/{agent.id}/backup-policy"


def test_an_editor_sets_the_policy_and_reads_it_back_with_its_next_run(tenancy, agent):
    client = tenancy.client("editor")

    put = client.put(_url(agent), {"schedule": "30 2 * * *", "keep": 5}, format="json")

    assert put.status_code == 200, put.json()
    body = client.get(_url(agent)).json()
    assert body == put.json()
    assert (body["schedule"], body["keep"], body["destination"]) == ("30 2 * * *", 5, None)
    assert body["nextRunAt"].endswith("T02:30:00+00:00")


def test_the_destination_credentials_are_encrypted_and_read_back_redacted(tenancy, agent):
    client = tenancy.client("editor")

    body = client.put(_url(agent), {"schedule": "0 * * * *", "keep": 2, "destination": S3}, format="json").json()

    assert body["destination"] == {"url": S3["url"], "accessKeyId": "[REDACTED]", "secretAccessKey": "[REDACTED]",
                                   "region": ""}
    with connection.cursor() as cursor:
        cursor.execute("SELECT destination_secret_access_key, destination_access_key_id FROM backups_backuppolicy")
        stored = " ".join(cursor.fetchone())
    assert S3["secretAccessKey"] not in stored and S3["accessKeyId"] not in stored
    policy = BackupPolicy.objects.get(agent=agent)
    assert policy.destination_secret_access_key == S3["secretAccessKey"]


def test_redacted_credentials_written_back_keep_the_stored_ones_for_the_same_url_only(tenancy, agent):
    client = tenancy.client("editor")
    client.put(_url(agent), {"schedule": "0 * * * *", "keep": 2, "destination": S3}, format="json")
    redacted = {**S3, "accessKeyId": "[REDACTED]", "secretAccessKey": "[REDACTED]"}

    kept = client.put(_url(agent), {"schedule": "0 4 * * *", "keep": 3, "destination": redacted}, format="json")
    assert kept.status_code == 200
    assert BackupPolicy.objects.get(agent=agent).destination_secret_access_key == S3["secretAccessKey"]

    elsewhere = {**redacted, "url": "http://127.0.0.1:9001/other"}
    refused = client.put(_url(agent), {"schedule": "0 4 * * *", "keep": 3, "destination": elsewhere}, format="json")
    assert refused.status_code == 400
    assert set(refused.json()["fields"]) == {"destination.accessKeyId", "destination.secretAccessKey"}
    assert BackupPolicy.objects.get(agent=agent).destination_url == S3["url"]


@pytest.mark.parametrize(("body", "field"), [
    ({"schedule": "0 3 * *", "keep": 1}, "schedule"),
    ({"schedule": "61 3 * * *", "keep": 1}, "schedule"),
    ({"schedule": "0 3 * * *", "keep": 0}, "keep"),
    ({"schedule": "0 3 * * *"}, "keep"),
    ({"schedule": "0 3 * * *", "keep": 1, "destination": {**S3, "url": "file:///etc"}}, "destination.url"),
    ({"schedule": "0 3 * * *", "keep": 1, "destination": {**S3, "url": "http://169.254.169.254/b"}},
     "destination.url"),
    ({"schedule": "0 3 * * *", "keep": 1, "destination": {**S3, "url": "http://10.1.2.3/b"}}, "destination.url"),
    ({"schedule": "0 3 * * *", "keep": 1, "destination": {**S3, "url": "http://127.0.0.1:9000/"}},
     "destination.url"),
    ({"schedule": "0 3 * * *", "keep": 1, "destination": {**S3, "url": "http://k:s@127.0.0.1:9000/b"}},
     "destination.url"),
])
def test_a_bad_policy_is_400_naming_the_field(tenancy, agent, body, field):
    response = tenancy.client("editor").put(_url(agent), body, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error" and field in response.json()["fields"]
    assert not BackupPolicy.objects.exists()


def test_a_missing_policy_is_404_and_delete_removes_one(tenancy, agent):
    client = tenancy.client("editor")
    assert client.get(_url(agent)).status_code == 404
    client.put(_url(agent), {"schedule": "0 3 * * *", "keep": 1}, format="json")

    assert client.delete(_url(agent)).json() == {"success": True}
    assert client.get(_url(agent)).status_code == 404
    assert client.delete(_url(agent)).status_code == 404


@pytest.mark.parametrize(("caller", "method", "status", "code"), [
    ("anonymous", "get", 401, "not_authenticated"),
    ("anonymous", "put", 401, "not_authenticated"),
    ("viewer", "get", 403, "permission_denied"),
    ("viewer", "put", 403, "permission_denied"),
    ("outsider", "get", 404, "not_found"),
    ("outsider", "put", 404, "not_found"),
    ("other-key", "get", 404, "not_found"),
    ("other-key", "put", 404, "not_found"),
    ("key:agents:read", "put", 403, "missing_scope"),
    ("key:workspaces:read", "get", 403, "missing_scope"),
])
def test_who_may_not_read_or_set_the_policy(tenancy, agent, caller, method, status, code):
    tenancy.client("editor").put(_url(agent), {"schedule": "0 3 * * *", "keep": 1}, format="json")

    response = getattr(tenancy.client(caller), method)(_url(agent), {"schedule": "0 4 * * *", "keep": 9},
                                                       format="json")

    assert (response.status_code, response.json()["code"]) == (status, code)
    assert BackupPolicy.objects.get(agent=agent).keep == 1


@pytest.mark.parametrize(("caller", "method"), [("key:agents:read", "get"), ("key:agents:write", "put"),
                                                ("owner", "put"), ("agent_owner", "put")])
def test_editors_owners_and_keys_with_the_scope_may(tenancy, agent, caller, method):
    response = getattr(tenancy.client(caller), method)(_url(agent), {"schedule": "0 4 * * *", "keep": 9},
                                                       format="json")
    assert response.status_code in (200, 404)  # a GET before any PUT: the policy's own 404
    if method == "get":
        assert response.json()["code"] == "not_found" and "no backup policy" in response.json()["error"]
