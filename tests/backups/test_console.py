"""The console: the agent page's backups card, its "Back up now" button and the restore button's
confirmation page, through the services the API calls."""

from __future__ import annotations

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from agents.files.drafts import migration_draft_get
from backups.models import Backup, BackupPolicy
from backups.tasks import restore_backup
from tests.backups.test_backups_api import _completed

pytestmark = pytest.mark.django_db


def _page(console, agent) -> str:
    return console.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()


def test_the_agent_page_shows_the_policy_and_the_backups_with_restore_on_completed_ones(console, tenancy):
    agent = tenancy.agent(container_id="c")
    BackupPolicy.objects.create(agent=agent, schedule="15 4 * * *", keep=4, next_run_at=timezone.now())
    done = Backup.objects.create(agent=agent, trigger="schedule", status="completed", object_key="k", size=2048,
                                 completed_at=timezone.now())
    failed = Backup.objects.create(agent=agent, trigger="manual", status="failed", object_key="", error="S3 down")

    page = _page(console, agent)

    assert 'id="agent-backups"' in page and "<code>15 4 * * *</code>" in page and "keeps 4" in page
    assert "S3 down" in page and "2.0\xa0KB" in page
    assert f"/admin/backups/backup/agent/{agent.pk}/{done.pk}/restore/" in page
    assert f"/{failed.pk}/restore/" not in page


def test_back_up_now_starts_a_backup_and_says_so(console, tenancy):
    agent = tenancy.agent(container_id="c")

    response = console.post(f"/admin/backups/backup/agent/{agent.pk}/take/", follow=True)

    assert "A backup of" in response.content.decode()
    assert Backup.objects.get(agent=agent).status == "running"


def test_back_up_now_on_an_agent_without_a_workload_names_the_refusal(console, tenancy):
    agent = tenancy.agent()

    response = console.post(f"/admin/backups/backup/agent/{agent.pk}/take/", follow=True)

    assert "Could not back up" in response.content.decode() and not Backup.objects.exists()


def test_restore_asks_first_then_makes_a_draft_for_a_new_agent(console, tenancy, platform_admin, backup_settings,
                                                                tmp_path):
    agent = tenancy.agent(container_id="c")
    backup = _completed(agent, backup_settings, tmp_path)
    url = f"/admin/backups/backup/agent/{agent.pk}/{backup.pk}/restore/"

    asked = console.get(url).content.decode()
    assert 'id="backup-restore-confirm"' in asked and 'name="confirmed" value="yes"' in asked
    unconfirmed = console.post(url, {"into": "same"})
    assert unconfirmed.status_code == 200 and 'id="backup-restore-confirm"' in unconfirmed.content.decode()
    agent.refresh_from_db()
    assert agent.status == "stopped"  # nothing happened without the confirmation

    done = console.post(url, {"into": "new", "confirmed": "yes"}, follow=True).content.decode()
    assert "migration draft" in done
    draft_id = done.split("migration draft ")[1].split(" ")[0]
    assert migration_draft_get(user=platform_admin, draft_id=draft_id).manifest["runtime_family"] == "openclaw"


def test_restoring_a_backup_that_is_not_completed_names_the_refusal(console, tenancy):
    agent = tenancy.agent(container_id="c")
    backup = Backup.objects.create(agent=agent, trigger="manual", status="failed", object_key="")

    response = console.post(f"/admin/backups/backup/agent/{agent.pk}/{backup.pk}/restore/",
                            {"into": "same", "confirmed": "yes"}, follow=True)

    assert "Only a completed backup can be restored" in response.content.decode()


def test_restoring_into_the_agent_queues_the_job_and_says_so(console, tenancy, backup_settings, tmp_path,
                                                             monkeypatch, django_capture_on_commit_callbacks):
    agent = tenancy.agent(container_id="c")
    backup = _completed(agent, backup_settings, tmp_path)
    queued = []
    monkeypatch.setattr(restore_backup, "delay", queued.append)

    with django_capture_on_commit_callbacks(execute=True):
        done = console.post(f"/admin/backups/backup/agent/{agent.pk}/{backup.pk}/restore/",
                            {"into": "same", "confirmed": "yes"}, follow=True).content.decode()

    assert "will be redeployed on its backup" in done
    assert queued == [str(backup.pk)]


@pytest.mark.django_db(transaction=True)  # the job is published when the console's write really commits
def test_a_broker_that_cannot_take_the_restore_is_a_503_page_not_a_server_error(console, tenancy, backup_settings,
                                                                                 tmp_path, monkeypatch):
    agent = tenancy.agent(container_id="c")
    backup = _completed(agent, backup_settings, tmp_path)

    def refuse(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(restore_backup, "delay", refuse)
    response = console.post(f"/admin/backups/backup/agent/{agent.pk}/{backup.pk}/restore/",
                            {"into": "same", "confirmed": "yes"})

    assert response.status_code == 503
    assert "task broker could not be reached" in response.content.decode()
