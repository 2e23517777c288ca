"""Build one recipe into an image on a Docker engine, unless the engine already has it.

A recipe's digest covers the files that define it (its module, its entrypoint, the shared
rootfs code) and its pinned versions. The image carries it as a label, so a tag built from
the same recipe is skipped and a changed recipe is rebuilt, wherever the engine runs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import docker
from docker import errors as docker_errors

from agents.images.rootfs import Rootfs

HERE = Path(__file__).resolve().parent
DIGEST_LABEL = "fleet.runtime_image_digest"
FAMILY_LABEL = "fleet.runtime_family"
VERSION_LABEL = "fleet.runtime_version"
CHUNK = 1024 * 1024
# Importing a 700 MB layer keeps the engine busy for a while before it answers.
IMPORT_TIMEOUT = 900
COMMON_SOURCES = ("build.py", "rootfs.py")


class BuildError(RuntimeError):
    """The image could not be built; the message says why (never a secret)."""


@dataclass
class BuildContext:
    """What a recipe's stage step may use: a download cache kept between builds, a scratch
    folder removed after the build, and a progress printer."""

    cache_dir: Path
    work_dir: Path
    say: Callable[[str], None]
    family: str = ""

    @contextmanager
    def stage(self, what: str) -> Iterator[None]:
        started = time.monotonic()
        self.say(f"{self.family}: {what} ...")
        yield
        self.say(f"{self.family}: {what} done in {time.monotonic() - started:.1f} s")

    def run(self, command: list[str], *, env: dict[str, str] | None = None, what: str) -> str:
        """Run a build tool (npm, pip: the registries' own clients, which no library replaces);
        its output is shown only when it fails."""
        result = subprocess.run(
            [str(part) for part in command], capture_output=True, text=True, env={**os.environ, **(env or {})}
        )
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip()[-2000:]
            raise BuildError(f"{what} failed (exit {result.returncode}):\n{tail}")
        return result.stdout


@dataclass(frozen=True)
class Recipe:
    family: str
    version: str
    tag: str
    stage: Callable[[Rootfs, BuildContext], None]  # fills the rootfs
    changes: tuple[str, ...]  # Dockerfile-style instructions for `docker import --change`
    sources: tuple[str, ...] = ()  # files of this folder that define the recipe
    pins: tuple[str, ...] = ()  # versions and anything else worth a rebuild

    def digest(self) -> str:
        digest = hashlib.sha256()
        for part in (self.family, self.version, self.tag, *self.pins, *self.changes):
            digest.update(part.encode() + b"\0")
        for name in (*COMMON_SOURCES, *self.sources):
            digest.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Outcome:
    tag: str
    built: bool  # False: skipped, the engine has this recipe's image already
    seconds: float
    image_id: str
    size_bytes: int


def built_digest(client: docker.DockerClient, tag: str) -> str | None:
    """The recipe digest of the image the engine has under `tag`, None when it has none."""
    try:
        image = client.images.get(tag)
    except docker_errors.ImageNotFound:
        return None
    return (image.labels or {}).get(DIGEST_LABEL, "")


def build_image(
    client: docker.DockerClient, recipe: Recipe, *, cache_dir: Path, say: Callable[[str], None], force: bool = False
) -> Outcome:
    started = time.monotonic()
    digest = recipe.digest()
    previous = _image_id(client, recipe.tag)
    if not force and built_digest(client, recipe.tag) == digest:
        image = client.images.get(recipe.tag)
        seconds = time.monotonic() - started
        say(f"{recipe.family}: {recipe.tag} is up to date (recipe {digest}), skipped in {seconds:.1f} s")
        return Outcome(recipe.tag, False, seconds, image.id, image.attrs.get("Size", 0))
    cache_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"fleet-{recipe.family}-image-"))
    context = BuildContext(cache_dir=cache_dir, work_dir=scratch / "work", say=say, family=recipe.family)
    try:
        _stage_and_import(client, recipe, digest, Rootfs(scratch / "rootfs"), context)
    finally:
        with context.stage("cleaning up"):
            shutil.rmtree(scratch, ignore_errors=True)
    image = client.images.get(recipe.tag)
    if (image.labels or {}).get(DIGEST_LABEL) != digest:
        raise BuildError(f"The engine did not keep {recipe.tag} as imported.")
    if previous and previous != image.id:
        with context.stage("removing the image it replaces"):
            _remove_untagged(client, previous)
    seconds = time.monotonic() - started
    say(f"{recipe.family}: built {recipe.tag} ({image.short_id}, {image.attrs.get('Size', 0) / 1e6:.0f} MB) in {seconds:.1f} s")
    return Outcome(recipe.tag, True, seconds, image.id, image.attrs.get("Size", 0))


def _stage_and_import(client: docker.DockerClient, recipe: Recipe, digest: str, rootfs: Rootfs,
                      context: BuildContext) -> None:
    context.work_dir.mkdir()
    recipe.stage(rootfs, context)
    with context.stage("shared libraries"):
        added = rootfs.add_shared_libraries()
    context.say(f"{recipe.family}: {added} host libraries copied")
    if rootfs.unresolved:
        # Prebuilt addons for other libcs (musl) name libraries this machine lacks: the runtime,
        # on glibc, never loads those addons. Said once, as what it is, not as a warning.
        context.say(f"{recipe.family}: {len(rootfs.unresolved)} libraries only other platforms' prebuilt addons use "
                    f"(never loaded here) left out: {', '.join(sorted(rootfs.unresolved))}")
    changes = [
        *recipe.changes,
        f"LABEL {DIGEST_LABEL}={digest} {FAMILY_LABEL}={recipe.family} {VERSION_LABEL}={recipe.version}",
    ]
    with context.stage(f"docker import {recipe.tag} ({rootfs.size_bytes() / 1e6:.0f} MB)"):
        import_rootfs(client, rootfs, recipe.tag, changes)


def _image_id(client: docker.DockerClient, tag: str) -> str | None:
    try:
        return client.images.get(tag).id
    except docker_errors.ImageNotFound:
        return None


def _remove_untagged(client: docker.DockerClient, image_id: str) -> None:
    """Drop the image the tag pointed at before, so each rebuild does not leave 700 MB behind.
    Containers still running it (agents not yet redeployed) keep it: the engine refuses then."""
    try:
        client.images.remove(image_id, noprune=False)
    except docker_errors.APIError:
        pass


def import_rootfs(client: docker.DockerClient, rootfs: Rootfs, tag: str, changes: list[str]) -> None:
    """Stream the tree into `POST /images/create?fromSrc=-` (what `docker import -` does).
    docker-py rather than the docker CLI: the engine may be remote and the CLI absent; a
    thread writes the tar into a pipe so the 700 MB stream never sits on disk or in memory."""
    repository, _, version = tag.rpartition(":")
    read_fd, write_fd = os.pipe()
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            with os.fdopen(write_fd, "wb") as out:
                rootfs.write_tar(out)
        except BrokenPipeError:
            pass  # the engine stopped reading; its answer says why
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failure.append(exc)

    producer = threading.Thread(target=produce, name=f"tar {tag}", daemon=True)
    producer.start()
    try:
        with os.fdopen(read_fd, "rb") as source:
            chunks = iter(lambda: source.read(CHUNK), b"")
            answer = client.api.import_image(src=chunks, repository=repository, tag=version, changes=changes)
    except docker_errors.APIError as exc:
        raise BuildError(f"The Docker engine refused the import of {tag}: {exc.explanation or exc}") from exc
    finally:
        producer.join()
    if failure:
        raise BuildError(f"Packing the root filesystem of {tag} failed: {failure[0]}") from failure[0]
    # The engine reports a failed import inside a 200 answer's JSON stream.
    for line in str(answer).splitlines():
        if '"error"' in line:
            raise BuildError(f"The Docker engine could not import {tag}: {line.strip()[:500]}")


def engine_for_build(host: str) -> docker.DockerClient:
    try:
        client = docker.DockerClient(base_url=host, version="auto", timeout=IMPORT_TIMEOUT)
        client.ping()
    except docker_errors.DockerException as exc:
        raise BuildError(f"The Docker engine at {host} does not answer: {exc}") from exc
    return client
