"""DockerBackend's state-folder operations (list, read, write, delete, export, import) against the
real engine, and the confinement of every path to /state (`..`, absolute paths, links out)."""

from __future__ import annotations

import io
import tarfile

import pytest

from agents.backends.base import FileTooLarge, NotAFile, PathRefused
from tests.agents.backends.support import FakeAgent, spec_for
from tests.infra.docker import exec_in

pytestmark = pytest.mark.usefixtures("docker_settings")


def _sh(docker_engine, agent, command: str) -> tuple[int, str]:
    result = exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", command])
    return result.exit_code, result.output.decode().strip()


def test_a_written_file_is_listed_read_back_and_deleted(backend, docker_engine, deployed):
    backend.write_file(deployed, "notes/today/plan.md", b"# plan\n")

    root = {entry.name: entry for entry in backend.list_files(deployed, "")}
    assert root["notes"].type == "dir" and root["notes"].path == "notes"
    [entry] = backend.list_files(deployed, "notes/today")
    assert (entry.name, entry.path, entry.type, entry.size) == ("plan.md", "notes/today/plan.md", "file", 7)
    assert entry.modified_at is not None
    assert backend.read_file(deployed, "notes/today/plan.md", max_bytes=100) == b"# plan\n"
    assert _sh(docker_engine, deployed, "cat /state/notes/today/plan.md") == (0, "# plan")

    backend.delete_file(deployed, "notes")
    assert _sh(docker_engine, deployed, "test -e /state/notes; echo $?") == (0, "1")
    with pytest.raises(NotAFile):
        backend.read_file(deployed, "notes/today/plan.md", max_bytes=100)


def test_overwriting_a_file_replaces_it(backend, deployed):
    backend.write_file(deployed, "a.txt", b"first")
    backend.write_file(deployed, "a.txt", b"second")
    assert backend.read_file(deployed, "a.txt", max_bytes=100) == b"second"


def test_missing_paths_and_folders_read_as_files_are_not_files(backend, deployed):
    backend.write_file(deployed, "dir/x", b"x")
    with pytest.raises(NotAFile):
        backend.stat_path(deployed, "nothing-here")
    with pytest.raises(NotAFile):
        backend.read_file(deployed, "dir", max_bytes=100)
    with pytest.raises(NotAFile):
        backend.delete_file(deployed, "nothing-here")


def test_a_file_above_the_cap_is_too_large(backend, deployed):
    backend.write_file(deployed, "big.bin", b"x" * 2048)
    assert backend.stat_path(deployed, "big.bin").size == 2048
    with pytest.raises(FileTooLarge):
        backend.read_file(deployed, "big.bin", max_bytes=2047)


@pytest.mark.parametrize("path", ["/etc/passwd", "../etc/passwd", "a/../../etc/passwd", "..", "a/.."])
def test_dot_dot_and_absolute_paths_are_refused_by_every_operation(backend, deployed, path):
    for operation in (lambda: backend.stat_path(deployed, path),
                      lambda: backend.read_file(deployed, path, max_bytes=10),
                      lambda: backend.write_file(deployed, path, b"x"),
                      lambda: backend.delete_file(deployed, path)):
        with pytest.raises(PathRefused):
            operation()


def test_links_leaving_the_state_folder_are_refused(backend, docker_engine, deployed):
    assert _sh(docker_engine, deployed, "ln -s /etc /state/out && ln -s ../etc/passwd /state/pw")[0] == 0

    for path in ("out/passwd", "out", "pw"):
        with pytest.raises(PathRefused):
            backend.read_file(deployed, path, max_bytes=100_000)
    with pytest.raises(PathRefused):
        backend.write_file(deployed, "out/evil", b"x")
    with pytest.raises(PathRefused):
        backend.list_files(deployed, "out")
    with pytest.raises(PathRefused):
        backend.delete_file(deployed, "out/passwd")
    assert _sh(docker_engine, deployed, "test -e /etc/evil; echo $?") == (0, "1")


def test_a_link_inside_the_state_folder_is_followed(backend, docker_engine, deployed):
    backend.write_file(deployed, "real/file.txt", b"inside")
    assert _sh(docker_engine, deployed, "ln -s /state/real /state/alias")[0] == 0
    assert backend.read_file(deployed, "alias/file.txt", max_bytes=100) == b"inside"


def test_deleting_in_a_stopped_container_uses_a_helper_on_the_volume(backend, docker_engine, deployed):
    backend.write_file(deployed, "gone.txt", b"x")
    backend.stop(deployed)

    backend.delete_file(deployed, "gone.txt")

    backend.start(deployed)
    assert _sh(docker_engine, deployed, "test -e /state/gone.txt; echo $?") == (0, "1")
    helpers = docker_engine.containers.list(all=True, ignore_removed=True, filters={"label": "fleet.helper"})
    assert not [h for h in helpers if h.attrs["Config"]["Entrypoint"] == ["rm"]]


def _tar(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_export_is_a_tar_of_the_state_folder(backend, deployed):
    backend.write_file(deployed, "memory/a.md", b"remember")

    data = b"".join(backend.export_state(deployed))

    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        names = archive.getnames()
        assert "state/memory/a.md" in names
        assert archive.extractfile("state/memory/a.md").read() == b"remember"


def test_import_restores_the_state_before_the_workload_first_starts(backend, docker_engine):
    agent = FakeAgent()
    spec = spec_for(agent, ram_mb=256)
    archive = _tar({"state": None, "state/memory": None, "state/memory/a.md": b"migrated", "manifest.json": b"{}"})

    backend.import_state(agent, spec, io.BytesIO(archive))
    agent.place(backend.create(agent, spec))

    try:
        assert backend.read_file(agent, "memory/a.md", max_bytes=100) == b"migrated"
        assert _sh(docker_engine, agent, "test -e /state/manifest.json; echo $?") == (0, "1")
        assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                                 filters={"label": "fleet.helper=import"})
    finally:
        backend.remove(agent)
