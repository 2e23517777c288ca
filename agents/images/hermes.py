"""fleet/hermes: Hermes Agent from PyPI on Debian's CPython 3.11 (RUNTIMES.md sections 2 and 3).

The interpreter must be Debian's `/usr/bin/python3.11` (packages python3.11, python3.11-venv):
its standard library sits at a fixed /usr/lib path the image can reproduce, unlike a pyenv or
other self-built Python under a home folder. The venv is built in place at /opt/hermes inside
the rootfs; the build folder's path it records is rewritten to the path in the image.
"""

from __future__ import annotations

from pathlib import Path

from agents.images.build import BuildContext, BuildError, Recipe
from agents.images.rootfs import RUNTIME_UID, SHELL_PROGRAMS, Rootfs
from agents.images.scripts import install_entrypoint

VERSION = "0.19.0"
REQUIREMENT = f"hermes-agent[messaging]=={VERSION}"  # [messaging] brings aiohttp, the API server needs it
TAG = f"fleet/hermes:{VERSION}"

PYTHON = "/usr/bin/python3.11"
STDLIB = "/usr/lib/python3.11"
VENV = "/opt/hermes"
STATE = "/state"
HOME = f"{STATE}/home"


def _unbuild_paths(rootfs: Rootfs) -> None:
    """Script shebangs, activate scripts and pyvenv.cfg name the venv by its build path."""
    build_path = str(rootfs.at(VENV)).encode()
    venv = rootfs.at(VENV)
    for path in [venv / "pyvenv.cfg", *(venv / "bin").iterdir()]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if build_path in data:
            path.write_bytes(data.replace(build_path, VENV.encode()))


def stage(rootfs: Rootfs, context: BuildContext) -> None:
    if not (Path(PYTHON).is_file() and Path(STDLIB, "os.py").is_file()):
        raise BuildError(f"{PYTHON} is missing on this machine (Debian: apt-get install python3.11 python3.11-venv).")
    with context.stage("python 3.11"):
        rootfs.copy(PYTHON, mode=0o755)
        rootfs.symlink("python3.11", "/usr/bin/python3")
        rootfs.copy_tree(STDLIB, STDLIB, ignore=_skip_stdlib_extras)
    venv = rootfs.at(VENV)
    with context.stage("venv"):
        context.run([PYTHON, "-m", "venv", venv], what="python3.11 -m venv (Debian: apt-get install python3.11-venv)")
    with context.stage(f"pip install {REQUIREMENT}"):
        context.run(
            [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-input", "--disable-pip-version-check",
             "--no-compile", "--cache-dir", context.cache_dir / "pip", REQUIREMENT],
            what=f"pip install {REQUIREMENT}",
        )
    with context.stage("bytecode"):
        # Compiled here with the image's paths: the runtime user cannot write /opt/hermes, so
        # without these every start would compile the whole tree again.
        context.run(
            [PYTHON, "-m", "compileall", "-q", "-j", "0", "-s", rootfs.path, "-p", "/", venv / "lib"],
            what="compileall",
        )
        _unbuild_paths(rootfs)
    with context.stage("base files"):
        rootfs.add_base(home=HOME, state=STATE)
        rootfs.add_programs(SHELL_PROGRAMS)
        install_entrypoint(rootfs, "hermes-entrypoint.sh")


def _skip_stdlib_extras(folder: str, names: list[str]) -> set[str]:
    # The test suite and IDLE are never imported by a runtime.
    if folder == STDLIB:
        return {name for name in names if name in ("test", "idlelib", "turtledemo")}
    return set()


RECIPE = Recipe(
    family="hermes",
    version=VERSION,
    tag=TAG,
    stage=stage,
    sources=("hermes.py", "scripts/__init__.py", "scripts/supervise.sh", "scripts/hermes-entrypoint.sh"),
    pins=(REQUIREMENT, PYTHON),
    changes=(
        f"ENV PATH={VENV}/bin:/usr/local/bin:/usr/bin:/bin",
        f"ENV HERMES_HOME={STATE} HOME={HOME} TMPDIR=/tmp API_SERVER_ENABLED=true PYTHONUNBUFFERED=1",
        "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
        f"USER {RUNTIME_UID}:{RUNTIME_UID}",
        f"WORKDIR {STATE}",
        'ENTRYPOINT ["/usr/local/bin/fleet-entrypoint"]',
    ),
)
