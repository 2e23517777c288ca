"""The files and export routes on a real container (the test runtime image): bytes in and out,
folder listings, the 5 MB cap, paths that leave the state folder, and the export bundle."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from django.conf import settings as django_settings

from tests.factories.agents import make_budget, place_on_engine
from tests.infra.docker import exec_in

pytestmark = [pytest.mark.django_db, pytest.mark.docker]

MB = 1024 * 1024


@pytest.fixture
def agent(tenancy, docker_settings):
    agent = place_on_engine(tenancy.agent(name="files-agent"))
    yield agent
    from agents.backends.engine import backend_of

    backend_of(agent).remove(agent)


@pytest.fixture
def editor(tenancy):
    return tenancy.client("editor")


def _put(client, agent, path: str, data: bytes):
    return client.put(f"/api/agents/{agent.id}/files/{path}", data, content_type="application/octet-stream")


def _sh(docker_engine, agent, command: str) -> tuple[int, str]:
    result = exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", command])
    return result.exit_code, result.output.decode().strip()


def test_a_written_file_reads_back_as_bytes_and_shows_in_its_folder(agent, editor, tenancy):
    assert _put(editor, agent, "notes/plan.md", b"# plan\n\x00binary").json() == {"success": True}

    viewer = tenancy.client("viewer")
    read = viewer.get(f"/api/agents/{agent.id}/files/notes/plan.md")
    assert read.status_code == 200
    assert read["Content-Type"] == "application/octet-stream"
    assert read.content == b"# plan\n\x00binary"

    [entry] = viewer.get(f"/api/agents/{agent.id}/files/notes").json()
    assert set(entry) == {"name", "path", "type", "size", "modifiedAt"}
    assert (entry["name"], entry["path"], entry["type"], entry["size"]) == ("plan.md", "notes/plan.md", "file", 14)
    root = viewer.get(f"/api/agents/{agent.id}/files/").json()
    assert {"name": "notes", "type": "dir"}.items() <= next(e for e in root if e["name"] == "notes").items()


def test_delete_removes_the_file_and_a_missing_one_is_404(agent, editor):
    _put(editor, agent, "gone.txt", b"x")

    assert editor.delete(f"/api/agents/{agent.id}/files/gone.txt").json() == {"success": True}

    missing = editor.get(f"/api/agents/{agent.id}/files/gone.txt")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert editor.delete(f"/api/agents/{agent.id}/files/gone.txt").status_code == 404


def test_the_5_mb_cap_on_writing_and_reading(agent, editor, docker_engine):
    assert django_settings.AGENT_FILE_MAX_BYTES == 5 * MB
    assert _put(editor, agent, "exact.bin", b"a" * (5 * MB)).status_code == 200
    assert len(editor.get(f"/api/agents/{agent.id}/files/exact.bin").content) == 5 * MB

    too_big = _put(editor, agent, "big.bin", b"a" * (5 * MB + 1))
    assert (too_big.status_code, too_big.json()["code"]) == (413, "payload_too_large")

    assert _sh(docker_engine, agent, "head -c 5242881 /dev/zero > /state/large.bin")[0] == 0
    read = editor.get(f"/api/agents/{agent.id}/files/large.bin")
    assert (read.status_code, read.json()["code"]) == (413, "payload_too_large")


@pytest.mark.parametrize("path", ["a/%2e%2e/%2e%2e/etc/passwd", "%2e%2e/etc/passwd", "/etc/passwd", "..%2fetc"])
def test_paths_leaving_the_state_folder_are_400(agent, editor, path):
    for response in (editor.get(f"/api/agents/{agent.id}/files/{path}"), _put(editor, agent, path, b"x"),
                     editor.delete(f"/api/agents/{agent.id}/files/{path}")):
        assert (response.status_code, response.json()["code"]) == (400, "invalid_path"), path


def test_links_out_of_the_state_folder_are_400(agent, editor, docker_engine):
    assert _sh(docker_engine, agent, "ln -s /etc /state/etc-link")[0] == 0

    for response in (editor.get(f"/api/agents/{agent.id}/files/etc-link/passwd"),
                     editor.get(f"/api/agents/{agent.id}/files/etc-link"),
                     _put(editor, agent, "etc-link/evil", b"x")):
        assert (response.status_code, response.json()["code"]) == (400, "invalid_path")


def test_export_streams_a_bundle_with_the_manifest_and_the_state_without_secrets(agent, editor, docker_engine):
    make_budget(agent, period="weekly", limit_usd=12.5, soft_threshold_pct=75)
    _put(editor, agent, "memory/today.md", b"remember")
    # What the runtime itself keeps (Fleet's files API refuses to write them).
    assert _sh(docker_engine, agent, "cd /state && mkdir -p identity agents/main/agent && for f in .env "
               "openclaw.json identity/device.json agents/main/agent/auth-profiles.json; do "
               "echo SECRET=hunter2 > $f; done")[0] == 0

    response = editor.get(f"/api/agents/{agent.id}/export")

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/gzip"
    assert response["Content-Disposition"] == 'attachment; filename="files-agent.tar.gz"'
    data = b"".join(response.streaming_content)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        names = archive.getnames()
        assert names[0] == "manifest.json"
        assert "state/memory/today.md" in names
        assert not [n for n in names if n.endswith((".env", "openclaw.json", "device.json", "auth-profiles.json"))]
        assert all(n == "manifest.json" or n == "state" or n.startswith("state/") for n in names)
        manifest = json.load(archive.extractfile("manifest.json"))
        for member in archive.getmembers():
            if member.isfile():
                assert b"hunter2" not in archive.extractfile(member).read()
    assert (manifest["name"], manifest["runtime_family"]) == ("files-agent", "openclaw")
    assert manifest["resources"] == {"vcpu": float(agent.vcpu), "ram_mb": agent.ram_mb, "disk_gb": agent.disk_gb}
    assert manifest["budgets"] == [{"period": "weekly", "limit_micros": 12_500_000, "soft_threshold_pct": 75.0}]


def test_a_viewer_cannot_export(agent, tenancy):
    response = tenancy.client("viewer").get(f"/api/agents/{agent.id}/export")
    assert (response.status_code, response.json()["code"]) == (403, "permission_denied")


@pytest.mark.parametrize("path", [".env", "openclaw.json", "identity/device.json", "home/.ssh/id_ed25519",
                                  "agents/main/agent/auth-profiles.json", "tls/server.key",
                                  "home/.git-credentials", "exec-approvals.json", "home/.docker/config.json"])
def test_secrets_files_are_neither_read_nor_written_nor_deleted(agent, editor, docker_engine, path):
    keep = f"mkdir -p $(dirname /state/{path}) && echo SECRET=hunter2 > /state/{path}"
    assert _sh(docker_engine, agent, keep)[0] == 0

    for response in (editor.get(f"/api/agents/{agent.id}/files/{path}"), _put(editor, agent, path, b"x"),
                     editor.delete(f"/api/agents/{agent.id}/files/{path}")):
        assert (response.status_code, response.json()["code"]) == (403, "secret_file"), path
        assert b"hunter2" not in response.content
    assert _sh(docker_engine, agent, f"cat /state/{path}") == (0, "SECRET=hunter2")


def test_a_secrets_file_is_listed_by_name_and_not_read_through_a_link(agent, editor, docker_engine):
    assert _sh(docker_engine, agent, "echo TOKEN=hunter2 > /state/.env && ln -s /state/.env /state/alias")[0] == 0

    names = {entry["name"] for entry in editor.get(f"/api/agents/{agent.id}/files/").json()}
    assert {".env", "alias"} <= names
    response = editor.get(f"/api/agents/{agent.id}/files/alias")
    assert (response.status_code, response.json()["code"]) == (403, "secret_file")
