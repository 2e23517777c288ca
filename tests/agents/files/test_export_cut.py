"""An export never answers a broken bundle: the engine ends its archive early when a file of a
running runtime shrinks while it is read, and Fleet asks again or says so.

First the bundle writer on archives cut at each place a stream can stop, then the export route
on the real engine, its archive cut on the way (once: the next attempt's bundle is whole; every
time: 409 state_changing before any byte), and a runtime rewriting a file all through the export.
"""

from __future__ import annotations

import io
import tarfile

import pytest

from agents.backends.docker import DockerBackend
from agents.files.bundle import StateArchiveCut, bundle_write
from tests.factories.agents import place_on_engine
from tests.infra.docker import exec_in

MANIFEST = {"format": "fleet-agent-bundle", "version": 1, "name": "a"}


def _state_archive(files: dict[str, bytes]) -> bytes:
    """An archive as the engine sends one for /state/: the folder, then its files."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        folder = tarfile.TarInfo("state")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for name, data in files.items():
            info = tarfile.TarInfo(f"state/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _chunks(data: bytes, size: int = 1000):
    return (data[i:i + size] for i in range(0, len(data), size))


def _names(bundle: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r:gz") as archive:
        return {m.name: archive.extractfile(m).read() if m.isfile() else None for m in archive}


FILES = {"a.md": b"a" * 3000, "b.md": b"b" * 512}
WHOLE = _state_archive(FILES)


def test_a_whole_archive_with_its_record_padding_makes_a_whole_bundle():
    out = io.BytesIO()
    bundle_write(MANIFEST, _chunks(WHOLE), out)
    names = _names(out.getvalue())
    assert list(names)[:2] == ["manifest.json", "state"]
    assert (names["state/a.md"], names["state/b.md"]) == (FILES["a.md"], FILES["b.md"])


def _places(data: bytes) -> dict[str, int]:
    """Where b.md's header and data start, and where the end-of-archive marker does."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        b = archive.getmember("state/b.md")
        archive.getmembers()
        return {"b header": b.offset, "b data": b.offset_data, "marker": archive.offset}


@pytest.mark.parametrize("cut", ["inside a file", "inside a header", "between two members", "after the last member",
                                 "inside the marker"])
def test_an_archive_cut_anywhere_is_refused(cut):
    places = _places(WHOLE)
    length = {
        "inside a file": places["b data"] + 100,
        "inside a header": places["b header"] + 100,
        "between two members": places["b header"],
        "after the last member": places["marker"],
        "inside the marker": places["marker"] + 512,
    }[cut]
    with pytest.raises(StateArchiveCut):
        bundle_write(MANIFEST, _chunks(WHOLE[:length]), io.BytesIO())


# -- the route, on the real engine ----------------------------------------------------------------


@pytest.fixture
def agent(tenancy, docker_settings, db):
    agent = place_on_engine(tenancy.agent(name="busy-agent"))
    yield agent
    DockerBackend().remove(agent)


def _cut_on(monkeypatch, attempts_cut: int) -> list[int]:
    """Cut the engine's real archive in half on the first `attempts_cut` exports; the calls made."""
    real = DockerBackend.export_state
    calls = []

    def export_state(self, agent):
        calls.append(1)
        whole = b"".join(real(self, agent))
        return iter([whole[: len(whole) // 2]] if len(calls) <= attempts_cut else [whole])

    monkeypatch.setattr(DockerBackend, "export_state", export_state)
    return calls


def _write(docker_engine, agent, command: str) -> None:
    assert exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", command]).exit_code == 0


@pytest.mark.docker
@pytest.mark.django_db
def test_an_archive_cut_once_is_asked_for_again_and_the_bundle_is_whole(agent, tenancy, docker_engine, monkeypatch):
    _write(docker_engine, agent, "head -c 300000 /dev/urandom > /state/big.bin && echo kept > /state/note.md")
    calls = _cut_on(monkeypatch, attempts_cut=1)

    response = tenancy.client("editor").get(f"/api/agents/{agent.id}/export")

    assert response.status_code == 200 and len(calls) == 2
    data = b"".join(response.streaming_content)
    assert int(response["Content-Length"]) == len(data)
    names = _names(data)
    assert names["state/note.md"] == b"kept\n" and len(names["state/big.bin"]) == 300000


@pytest.mark.docker
@pytest.mark.django_db
def test_an_archive_cut_on_every_attempt_is_a_409_before_any_byte(agent, tenancy, docker_engine, monkeypatch,
                                                                   settings):
    settings.AGENT_EXPORT_ATTEMPTS = 2
    _write(docker_engine, agent, "head -c 300000 /dev/urandom > /state/big.bin")
    calls = _cut_on(monkeypatch, attempts_cut=99)

    response = tenancy.client("editor").get(f"/api/agents/{agent.id}/export")

    assert len(calls) == 2
    assert not response.streaming
    assert (response.status_code, response.json()["code"]) == (409, "state_changing")
    assert "2 attempts" in response.json()["error"]


@pytest.mark.docker
@pytest.mark.django_db
def test_a_runtime_rewriting_a_file_during_the_export_never_gets_a_broken_bundle(agent, tenancy, docker_engine):
    """What failed in CI: OpenClaw rewrote a state file while the engine read it, and the answer
    was a 200 whose bundle ended in the middle of that file."""
    container = docker_engine.containers.get(agent.container_id)
    _write(docker_engine, agent, "head -c 2000000 /dev/urandom > /state/seed && echo kept > /state/note.md")
    # Truncate and rewrite (as Node's writeFileSync does) for the whole export.
    container.exec_run(["sh", "-c", "while [ ! -e /tmp/stop ]; do cat /state/seed > /state/busy.json; done"],
                       detach=True)
    try:
        for _ in range(6):
            response = tenancy.client("editor").get(f"/api/agents/{agent.id}/export")
            if response.status_code == 409:
                assert response.json()["code"] == "state_changing"
                continue
            assert response.status_code == 200
            names = _names(b"".join(response.streaming_content))
            assert names["state/note.md"] == b"kept\n"
    finally:
        exec_in(container, ["touch", "/tmp/stop"])
