"""POST /api/agent-migrations and POST /api/agents/deploy with migration_draft_id: a draft of the
uploader on disk for 24 hours, validated, consumed once by a deploy (no engine needed)."""

from __future__ import annotations

import io
import json
import tarfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from agents.files.drafts import import_path, migration_drafts_expire
from agents.models import Agent
from tests.agents.files.bundles import MANIFEST, bundle, member
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def drafts_dir(settings, tmp_path):
    settings.MIGRATION_DRAFTS_DIR = str(tmp_path / "drafts")
    return tmp_path / "drafts"


def upload(client, data: bytes):
    return client.post("/api/agent-migrations", {"bundle": SimpleUploadedFile("agent.tar.gz", data)},
                       format="multipart")


def test_an_uploaded_bundle_becomes_a_draft_kept_24_hours_on_disk(tenancy, drafts_dir):
    response = upload(client_for(tenancy.editor), bundle())

    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == {"id", "manifest", "expiresAt"}
    assert body["manifest"]["name"] == "migrated-agent"
    assert body["manifest"]["resources"] == {"vcpu": 0.5, "ram_mb": 768, "disk_gb": 3}
    expires = timezone.datetime.fromisoformat(body["expiresAt"].replace("Z", "+00:00"))
    assert timedelta(hours=23, minutes=59) < expires - timezone.now() <= timedelta(hours=24)
    assert (drafts_dir / "drafts" / body["id"] / "bundle.tar.gz").read_bytes() == bundle()


def test_the_200_mb_cap_is_the_default_and_a_larger_bundle_is_413(tenancy, settings):
    assert django_settings.MIGRATION_BUNDLE_MAX_BYTES == 200 * 1024 * 1024
    data = bundle(state={"state/big.bin": b"\x00" * 10_000})
    settings.MIGRATION_BUNDLE_MAX_BYTES = len(data) - 1

    response = upload(client_for(tenancy.editor), data)

    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")


def test_a_declared_length_over_the_cap_is_refused_before_reading(tenancy):
    client = client_for(tenancy.editor)
    response = client.generic("POST", "/api/agent-migrations", b"x", content_type="multipart/form-data; boundary=x",
                              CONTENT_LENGTH=str(200 * 1024 * 1024 + 10 * 1024 * 1024))
    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")


TAMPERED = [
    ("dot-dot", bundle(entries=[(member("state/../../etc/cron.d/x"), b"x")])),
    ("dot-dot-at-top", bundle(entries=[(member("../x"), b"x")])),
    ("absolute", bundle(entries=[(member("/etc/passwd"), b"x")])),
    ("outside-state", bundle(entries=[(member("other/x"), b"x")])),
    ("symlink", bundle(entries=[(member("state/out", None, kind=tarfile.SYMTYPE, link="/etc"), None)])),
    ("hardlink", bundle(entries=[(member("state/pw", None, kind=tarfile.LNKTYPE, link="/etc/passwd"), None)])),
    ("fifo", bundle(entries=[(member("state/pipe", None, kind=tarfile.FIFOTYPE), None)])),
    ("no-manifest", bundle(entries=[(member("state/a"), b"x")])),
    ("manifest-not-json", bundle(manifest=b"{not json")),
    ("manifest-nul", bundle(manifest=json.dumps({**MANIFEST, "name": "a\x00b"}).encode())),
    ("manifest-no-name", bundle(manifest={k: v for k, v in MANIFEST.items() if k != "name"})),
    ("manifest-bad-family", bundle(manifest={**MANIFEST, "runtime_family": "nemo"})),
    ("manifest-bad-format", bundle(manifest={**MANIFEST, "format": "other"})),
    ("manifest-bad-vcpu", bundle(manifest={**MANIFEST, "resources": {"vcpu": "many"}})),
    ("manifest-bad-budget", bundle(manifest={**MANIFEST, "budgets": [{"period": "yearly"}]})),
    ("not-gzip", b"PK\x03\x04 this is a zip"),
    ("truncated", bundle()[:60]),
]


# Ids are the case names: the bytes (a gzip header with its time) differ between xdist workers.
@pytest.mark.parametrize(("case", "data"), TAMPERED, ids=[case for case, _ in TAMPERED])
def test_a_tampered_bundle_is_refused(tenancy, drafts_dir, case, data):
    response = upload(client_for(tenancy.editor), data)

    assert (response.status_code, response.json()["code"]) == (400, "invalid_bundle"), case
    assert not list((drafts_dir / "drafts").glob("*/bundle.tar.gz")) if (drafts_dir / "drafts").exists() else True


def test_a_request_without_the_bundle_field_is_400(tenancy):
    client = client_for(tenancy.editor)
    assert client.post("/api/agent-migrations", {}, format="json").status_code == 400
    assert client.post("/api/agent-migrations", {"other": "x"}, format="multipart").status_code == 400


@pytest.mark.parametrize("caller", ["key:agents:write", "key:agents:read", "other-key"])
def test_a_key_gets_session_required(tenancy, caller):
    response = upload(tenancy.client(caller), bundle())
    assert (response.status_code, response.json()["code"]) == (403, "session_required")


def test_without_a_credential_it_is_401(tenancy):
    assert upload(tenancy.client("anonymous"), bundle()).status_code == 401


def _draft(user) -> str:
    response = upload(client_for(user), bundle())
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_deploy_from_a_draft_takes_the_manifest_and_consumes_the_draft(tenancy, drafts_dir):
    draft_id = _draft(tenancy.editor)
    client = client_for(tenancy.editor)

    response = client.post("/api/agents/deploy", {"migration_draft_id": draft_id}, format="json")

    assert response.status_code == 201, response.content
    agent = Agent.objects.get(pk=response.json()["id"])
    assert (agent.name, agent.runtime_family, agent.status) == ("migrated-agent", "openclaw", "queued")
    assert (float(agent.vcpu), agent.ram_mb, agent.disk_gb) == (0.5, 768, 3)
    [budget] = agent.budgets.all()
    assert (budget.period, budget.limit_micros, float(budget.soft_threshold_pct)) == ("daily", 2_500_000, 70.0)
    assert import_path(agent.pk).read_bytes() == bundle()  # waits for provisioning to restore it
    assert not (drafts_dir / "drafts" / draft_id).exists()

    again = client.post("/api/agents/deploy", {"migration_draft_id": draft_id}, format="json")
    assert (again.status_code, again.json()["code"]) == (404, "not_found")


def test_body_fields_win_over_the_manifest(tenancy):
    draft_id = _draft(tenancy.editor)
    response = client_for(tenancy.editor).post(
        "/api/agents/deploy", {"migration_draft_id": draft_id, "name": "renamed", "ram_mb": 1024}, format="json")

    agent = Agent.objects.get(pk=response.json()["id"])
    assert (agent.name, agent.ram_mb, float(agent.vcpu)) == ("renamed", 1024, 0.5)


def test_another_users_draft_is_404_and_stays(tenancy, drafts_dir):
    draft_id = _draft(tenancy.editor)

    response = client_for(tenancy.outsider).post("/api/agents/deploy", {"migration_draft_id": draft_id}, format="json")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert (drafts_dir / "drafts" / draft_id / "bundle.tar.gz").exists()
    assert not Agent.objects.filter(owner=tenancy.outsider).exists()


def test_an_unknown_draft_is_404_and_a_malformed_id_400(tenancy):
    client = client_for(tenancy.editor)
    unknown = client.post("/api/agents/deploy", {"migration_draft_id": "6f1c1f43-77a4-4d0f-9d8f-5a1b0c0e1a11"},
                          format="json")
    assert unknown.status_code == 404
    assert client.post("/api/agents/deploy", {"migration_draft_id": "nope"}, format="json").status_code == 400


def test_a_key_naming_a_draft_gets_session_required_before_any_lookup(tenancy):
    draft_id = _draft(tenancy.owner)
    response = tenancy.client("key:agents:write").post("/api/agents/deploy", {"migration_draft_id": draft_id},
                                                       format="json")
    assert (response.status_code, response.json()["code"]) == (403, "session_required")


def _expire(drafts_dir: Path, draft_id: str) -> None:
    meta_path = drafts_dir / "drafts" / draft_id / "draft.json"
    meta = json.loads(meta_path.read_text())
    meta["expiresAt"] = (timezone.now() - timedelta(seconds=1)).isoformat()
    meta_path.write_text(json.dumps(meta))


def test_an_expired_draft_is_refused_and_deleted(tenancy, drafts_dir):
    draft_id = _draft(tenancy.editor)
    _expire(drafts_dir, draft_id)

    response = client_for(tenancy.editor).post("/api/agents/deploy", {"migration_draft_id": draft_id}, format="json")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")
    assert "expired" in response.json()["error"]
    assert not (drafts_dir / "drafts" / draft_id).exists()


def test_the_periodic_job_deletes_expired_drafts_only(tenancy, drafts_dir):
    old, fresh = _draft(tenancy.editor), _draft(tenancy.editor)
    _expire(drafts_dir, old)

    assert migration_drafts_expire() == 1

    assert not (drafts_dir / "drafts" / old).exists()
    assert (drafts_dir / "drafts" / fresh).exists()


def test_the_job_is_registered_with_beat():
    from django.apps import apps

    jobs = {job.task for job in apps.get_app_config("agents").periodic_tasks}
    assert "agents.tasks.expire_migration_drafts" in jobs


def test_a_bundle_tar_is_read_back_whole(tenancy):
    # The helper itself: the valid bundle holds the manifest and state/ only.
    with tarfile.open(fileobj=io.BytesIO(bundle())) as archive:
        assert archive.getnames() == ["manifest.json", "state", "state/memory.md"]


def test_a_consumed_bundle_no_provisioning_took_is_dropped_after_the_draft_lifetime(tenancy):
    import os

    draft_id = _draft(tenancy.editor)
    response = client_for(tenancy.editor).post("/api/agents/deploy", {"migration_draft_id": draft_id}, format="json")
    waiting = import_path(response.json()["id"])
    assert migration_drafts_expire() == 0 and waiting.exists()

    old = timezone.now().timestamp() - 25 * 3600
    os.utime(waiting, (old, old))

    assert migration_drafts_expire() == 1
    assert not waiting.exists()
