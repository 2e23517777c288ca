"""A policy's own S3 destination: backups go there with its credentials (recorded encrypted on
each backup, so a later change of destination still finds the older copies), the outbound
policy is asked again at every use, and the admin never shows a credential."""

from __future__ import annotations

import pytest
from django.db import connection

from agents.backends.engine import backend_of
from backups.models import Backup
from backups.services import DestinationIn, backup_perform, backup_policy_set, backup_request
from backups.services.runs import BackupAttemptFailed
from tests.factories.agents import place_on_engine
from tests.infra.s3 import ACCESS_KEY_ID, SECRET_ACCESS_KEY

pytestmark = [pytest.mark.django_db, pytest.mark.docker]


@pytest.fixture
def agent(tenancy, docker_settings):
    agent = place_on_engine(tenancy.agent(name="own-bucket"))
    yield agent
    backend_of(agent).remove(agent)


def _to_bucket(agent, s3_server, prefix: str):
    return backup_policy_set(agent=agent, schedule="0 3 * * *", keep=1, destination=DestinationIn(
        url=f"{s3_server.endpoint_url}/{s3_server.bucket}/{prefix}", access_key_id=ACCESS_KEY_ID,
        secret_access_key=SECRET_ACCESS_KEY))


def test_backups_go_to_the_policys_bucket_and_older_ones_are_pruned_where_they_went(agent, s3_server, tmp_path):
    _to_bucket(agent, s3_server, "first")
    first = backup_request(agent=agent)
    backup_perform(backup_id=first.pk, retrying_after=False)
    assert s3_server.keys() == [f"first/{first.object_key}"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT storage FROM backups_backup WHERE id = %s", [first.pk])
        assert SECRET_ACCESS_KEY not in cursor.fetchone()[0]  # encrypted at rest

    _to_bucket(agent, s3_server, "second")
    second = backup_request(agent=agent)
    backup_perform(backup_id=second.pk, retrying_after=False)

    assert s3_server.keys() == [f"second/{second.object_key}"]  # keep=1: the first copy deleted where it was
    assert list(Backup.objects.values_list("pk", flat=True)) == [second.pk]
    assert not (tmp_path / "backups").exists()  # nothing went to BACKUP_STORAGE_URL


def test_a_destination_the_outbound_policy_now_refuses_fails_without_retrying(agent, s3_server, backup_settings):
    _to_bucket(agent, s3_server, "p")
    backup = backup_request(agent=agent)
    backup_settings.OUTBOUND_ALLOWED_HOSTS = []  # loopback is refused from now on

    with pytest.raises(BackupAttemptFailed) as failed:
        backup_perform(backup_id=backup.pk, retrying_after=True)

    assert not failed.value.retryable
    backup.refresh_from_db()
    assert backup.status == "failed" and "outbound policy" in backup.error
    assert s3_server.keys() == []


def test_the_admin_shows_policies_and_backups_without_credentials(console, agent, s3_server):
    _to_bucket(agent, s3_server, "p")
    backup = backup_request(agent=agent)
    urls = ("/admin/backups/backuppolicy/", f"/admin/backups/backuppolicy/{agent.pk}/change/",
            "/admin/backups/backup/", f"/admin/backups/backup/{backup.pk}/change/")
    pages = [console.get(url) for url in urls]

    for page in pages:
        assert page.status_code == 200
        text = page.content.decode()
        assert SECRET_ACCESS_KEY not in text and ACCESS_KEY_ID not in text
    assert s3_server.bucket in pages[1].content.decode()
