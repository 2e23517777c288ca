"""build_image against the real engine with a tiny recipe (bash and its libraries, a few MB):
what is skipped, what is rebuilt, and that the staged root filesystem really runs."""

from __future__ import annotations

import tempfile

import pytest
from docker import errors as docker_errors

from agents.images.build import DIGEST_LABEL, FAMILY_LABEL, BuildError, Recipe, build_image
from agents.images.rootfs import Rootfs
from tests.infra.docker import SESSION_ID, SESSION_LABEL

pytestmark = pytest.mark.docker

TAG = f"fleet-test-tiny:{SESSION_ID}"  # per session: sessions may share the engine


def _stage(rootfs: Rootfs, context) -> None:
    with context.stage("bash"):
        rootfs.add_base(home="/state/home", state="/state")
        rootfs.add_programs(["bash"])
        rootfs.write("/hello", "hello from a tiny rootfs\n")


def tiny(pin: str = "1") -> Recipe:
    return Recipe(family="tiny", version="1", tag=TAG, stage=_stage, pins=(pin,),
                  changes=('ENTRYPOINT ["/usr/bin/bash", "-c"]',))


@pytest.fixture
def images(docker_engine, tmp_path):
    """Builds with a progress log; every image built here is removed afterwards."""
    built, lines = [], []

    def build(recipe: Recipe, **options):
        outcome = build_image(docker_engine, recipe, cache_dir=tmp_path / "cache", say=lines.append, **options)
        built.append(outcome.image_id)
        return outcome

    build.lines = lines
    yield build
    for image_id in {*built}:
        try:
            docker_engine.images.remove(image_id, force=True)
        except docker_errors.ImageNotFound:
            pass


def test_a_tag_built_from_the_same_recipe_is_skipped(images, docker_engine):
    first = images(tiny())
    second = images(tiny())

    assert first.built and not second.built
    assert second.image_id == first.image_id
    assert any("is up to date" in line for line in images.lines)
    labels = docker_engine.images.get(TAG).labels
    assert labels[DIGEST_LABEL] == tiny().digest() and labels[FAMILY_LABEL] == "tiny"


def test_a_changed_recipe_or_force_rebuilds_and_drops_the_image_it_replaces(images, docker_engine):
    first = images(tiny())
    changed = images(tiny(pin="2"))
    forced = images(tiny(pin="2"), force=True)

    assert changed.built and changed.image_id != first.image_id
    assert forced.built
    with pytest.raises(docker_errors.ImageNotFound):
        docker_engine.images.get(first.image_id)


def test_the_staged_rootfs_runs_with_the_libraries_ldd_named(images, docker_engine):
    images(tiny())

    output = docker_engine.containers.run(
        TAG, ["echo $0 $BASH_VERSION; read -r line </hello; echo $line; [ -k /tmp ] && echo tmp"],
        network_mode="host", remove=True, labels={SESSION_LABEL: SESSION_ID},
    )
    lines = output.decode().splitlines()
    assert lines[0].startswith("/usr/bin/bash 5.")
    assert lines[1:] == ["hello from a tiny rootfs", "tmp"]


def _failing_stage(rootfs: Rootfs, context) -> None:
    assert str(rootfs.path).startswith(tempfile.gettempdir())
    context.run(["sh", "-c", "echo 'registry says no' >&2; exit 3"], what="fetching the runtime")


def test_a_failing_step_stops_the_build_with_its_output_and_leaves_no_scratch(docker_engine, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the build's scratch folder goes
    recipe = Recipe(family="tiny", version="1", tag=TAG, stage=_failing_stage, changes=())

    with pytest.raises(BuildError, match=r"fetching the runtime failed \(exit 3\):\nregistry says no"):
        build_image(docker_engine, recipe, cache_dir=tmp_path / "cache", say=lambda line: None)
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]
    with pytest.raises(docker_errors.ImageNotFound):
        docker_engine.images.get(TAG)
