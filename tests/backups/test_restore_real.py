"""A real OpenClaw agent backed up to the loopback S3 server and restored, through the API:
a file written into its state, backed up, changed, restored into the same agent (stopped,
redeployed on the backup's state, the same agent again) with the old content back; then
restored as a new agent from the migration draft the backup becomes. One OpenClaw runs at a
time (the machine's cores): the source is stopped before the copy starts."""

from __future__ import annotations

import pytest

from agents.backends.engine import backend_of
from agents.models import Agent
from backups.models import Backup
from backups.tasks import restore_backup, run_backup
from tests.agents.runtimes.support import runtime_image
from tests.infra.provisioning import provision_to_end
from tests.support import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.docker, pytest.mark.runtime]

NOTE = "workspace/NOTES.md"


@pytest.fixture
def real_openclaw(docker_settings, docker_engine, backup_settings, s3_server):
    docker_settings.AGENT_IMAGE_OPENCLAW = runtime_image(docker_engine, "openclaw")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real image runs on a read-only root
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 120
    backup_settings.BACKUP_STORAGE_URL = s3_server.storage_url("fleet-backups")
    return docker_settings


def _provisioned(agent_id) -> Agent:
    provision_to_end(agent_id=agent_id)  # the job's body, in this test's transaction
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def _note(client, agent) -> bytes:
    response = client.get(f"/api/agents/{agent.id}/files/{NOTE}")
    assert response.status_code == 200, response.content
    return response.content


def test_a_real_openclaw_comes_back_from_its_s3_backup_in_place_and_as_a_new_agent(
        real_openclaw, tenancy, s3_server):
    client = client_for(tenancy.editor)
    deployed = client.post("/api/agents/deploy", {"name": "backed-up", "ram_mb": 2048, "vcpu": 1}, format="json")
    assert deployed.status_code == 201, deployed.content
    agent = _provisioned(deployed.json()["id"])
    copy = None
    try:
        files = f"/api/agents/{agent.id}/files/{NOTE}"
        assert client.put(files, b"before the bad day\n", content_type="application/octet-stream").status_code == 200

        asked = client.post(f"/api/agents/{agent.id}/backups")
        assert asked.status_code == 202
        run_backup.apply(args=[asked.json()["id"]])  # the job, while the runtime runs and writes its state
        [listed] = client.get(f"/api/agents/{agent.id}/backups").json()
        assert listed["status"] == "completed", listed["error"]
        backup = Backup.objects.get(pk=listed["id"])
        assert s3_server.keys() == [f"fleet-backups/{backup.object_key}"]

        client.put(files, b"after the bad day\n", content_type="application/octet-stream")
        assert _note(client, agent) == b"after the bad day\n"
        old_container = agent.container_id

        restored = client.post(f"/api/agents/{agent.id}/backups/{backup.pk}/restore", {"into": "same"},
                               format="json")
        assert restored.status_code == 202, restored.content
        assert restored.json() == {"agentId": str(agent.id), "status": "running"}  # the job stops it
        restore_backup.apply(args=[str(backup.pk)])  # the job: fetch, check, stop, redeploy
        agent = _provisioned(agent.id)
        assert agent.container_id != old_container  # a new workload on the kept, restored state
        assert _note(client, agent) == b"before the bad day\n"

        backend_of(agent).stop(agent)  # one OpenClaw at a time on these machines
        drafted = client.post(f"/api/agents/{agent.id}/backups/{backup.pk}/restore", {"into": "new"}, format="json")
        assert drafted.status_code == 201, drafted.content
        assert drafted.json()["manifest"]["name"] == "backed-up"
        made = client.post("/api/agents/deploy", {"migration_draft_id": drafted.json()["migrationDraftId"],
                                                  "name": "restored-copy"}, format="json")
        assert made.status_code == 201, made.content
        copy = _provisioned(made.json()["id"])
        assert _note(client, copy) == b"before the bad day\n"
    finally:
        for placed in (agent, copy):
            if placed is not None:
                backend_of(placed).remove(Agent.objects.get(pk=placed.pk))
