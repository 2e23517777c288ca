"""A real OpenClaw agent's state, end to end through the API on the real engine: write a file
into its state, read it back, export it, upload the bundle, deploy a new agent from the draft,
and find the file and the settings in the new agent, whose runtime started on the restored
state (provisioning restores it before the workload first starts)."""

from __future__ import annotations

import io
import tarfile

import pytest

from agents.backends.engine import backend_of
from agents.models import Agent
from tests.agents.runtimes.support import runtime_image
from tests.factories.agents import make_budget
from tests.infra.docker import exec_in
from tests.infra.provisioning import provision_to_end
from tests.support import client_for

pytestmark = [pytest.mark.django_db, pytest.mark.docker, pytest.mark.runtime]


@pytest.fixture
def real_openclaw(docker_settings, docker_engine, settings, tmp_path):
    docker_settings.AGENT_IMAGE_OPENCLAW = runtime_image(docker_engine, "openclaw")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real image runs on a read-only root
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 120
    settings.MIGRATION_DRAFTS_DIR = str(tmp_path / "drafts")
    return docker_settings


def _provisioned(agent_id) -> Agent:
    provision_to_end(agent_id=agent_id)  # the job's body, in this test's transaction
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def test_a_file_written_into_a_real_openclaw_agent_travels_with_its_settings_to_a_new_agent(
    real_openclaw, tenancy, docker_engine
):
    client = client_for(tenancy.editor)
    deployed = client.post("/api/agents/deploy", {"name": "source", "ram_mb": 2048, "vcpu": 1}, format="json")
    assert deployed.status_code == 201, deployed.content
    source = _provisioned(deployed.json()["id"])
    make_budget(source, period="monthly", limit_usd=42, soft_threshold_pct=90)
    files = f"/api/agents/{source.id}/files"

    written = client.put(f"{files}/workspace/MIGRATED.md", b"# carried over\n", content_type="application/octet-stream")
    assert written.json() == {"success": True}
    assert client.get(f"{files}/workspace/MIGRATED.md").content == b"# carried over\n"
    container = docker_engine.containers.get(source.container_id)
    assert exec_in(container, ["sh", "-c", "echo TOKEN=hunter2 > /state/.env"]).exit_code == 0  # as Hermes keeps one
    root = {entry["name"] for entry in client.get(f"{files}/").json()}
    assert {"workspace", ".env"} <= root

    exported = client.get(f"/api/agents/{source.id}/export")
    assert exported.status_code == 200 and exported.streaming
    bundle = b"".join(exported.streaming_content)
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as archive:
        names = archive.getnames()
        assert "state/workspace/MIGRATED.md" in names and "state/.env" not in names
        assert not [n for n in names if n.endswith("openclaw.json")]
    backend_of(source).stop(source)  # one OpenClaw at a time on these machines

    uploaded = client.post("/api/agent-migrations", {"bundle": io.BytesIO(bundle)}, format="multipart")
    assert uploaded.status_code == 201, uploaded.content
    draft = uploaded.json()
    assert draft["manifest"]["name"] == "source" and draft["manifest"]["runtime_family"] == "openclaw"

    migrated = client.post("/api/agents/deploy", {"migration_draft_id": draft["id"], "name": "copy"}, format="json")
    assert migrated.status_code == 201, migrated.content
    target = _provisioned(migrated.json()["id"])
    try:
        assert (target.name, target.runtime_family) == ("copy", "openclaw")  # the body's name wins
        assert (target.ram_mb, float(target.vcpu)) == (2048, 1.0)
        [budget] = target.budgets.all()
        assert (budget.period, budget.limit_micros, float(budget.soft_threshold_pct)) == ("monthly", 42_000_000, 90.0)
        copied = client.get(f"/api/agents/{target.id}/files/workspace/MIGRATED.md")
        assert (copied.status_code, copied.content) == (200, b"# carried over\n")
        secrets_left = exec_in(docker_engine.containers.get(target.container_id), ["ls", "-A", "/state"]).output
        assert b".env" not in secrets_left.split()  # secrets stay behind
        listing = exec_in(docker_engine.containers.get(target.container_id),
            ["ls", "-ln", "/state/workspace/MIGRATED.md"]).output.decode().split()
        assert listing[2:4] == ["10001", "10001"], listing  # the runtime's user owns what was restored
        again = client.post("/api/agents/deploy", {"migration_draft_id": draft["id"]}, format="json")
        assert again.status_code == 404  # the draft was consumed
    finally:
        backend_of(target).remove(target)
        backend_of(source).remove(source)
