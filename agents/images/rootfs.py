"""A root filesystem assembled in a folder from host files, packed as a tar stream for
`docker import`. Nothing here knows a runtime; the recipes say what goes in."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from agents.backends.base import RUNTIME_UID

ELF_MAGIC = b"\x7fELF"
# Debian's merged-/usr layout, so a library ldd names as /lib/... or /usr/lib/... lands in one
# place and the dynamic loader finds it in its built-in search path without an ld.so.cache.
MERGED_USR = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64"}
# glibc loads libgcc_s at run time (thread cancellation, backtraces): ldd cannot see that.
ALWAYS_LIBRARIES = ("libgcc_s.so.1",)
HOST_LIBRARY_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"

# bash for the exec tool and the entrypoints, env for `#!/usr/bin/env node` scripts, and the
# few tools an agent's shell commands and an operator's `docker exec` expect to find.
SHELL_PROGRAMS = ("bash", "env", "cat", "ls", "mkdir", "mv", "cp", "rm", "ln", "chmod", "touch", "head",
                  "tail", "wc", "sort", "tr", "grep", "sed", "find", "id", "date", "sleep", "uname")

RUNTIME_USER = "agent"


class RootfsError(RuntimeError):
    """Something the image needs is missing on this machine."""


class Rootfs:
    """A folder laid out as `/`. Paths given as `inside` are absolute paths in the image."""

    def __init__(self, path: Path):
        self.path = path
        # Paths (inside) whose owner is not root, e.g. the state folder the runtime writes.
        self.owners: dict[str, int] = {}
        self.unresolved: set[str] = set()  # library names ldd could not find on this machine
        for name, target in MERGED_USR.items():
            (path / target).mkdir(parents=True, exist_ok=True)
            (path / name).symlink_to(target)

    def at(self, inside: str | Path) -> Path:
        return self.path / str(inside).lstrip("/")

    def mkdir(self, inside: str, mode: int = 0o755, owner: int | None = None) -> Path:
        target = self.at(inside)
        target.mkdir(parents=True, exist_ok=True)
        target.chmod(mode)
        if owner is not None:
            self.owners[inside.rstrip("/")] = owner
        return target

    def write(self, inside: str, text: str, mode: int = 0o644) -> Path:
        target = self.at(inside)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(mode)
        return target

    def copy(self, source: str | Path, inside: str | None = None, mode: int | None = None) -> Path:
        """Copy one host file (symlinks followed) to `inside`, by default the same path."""
        source = Path(source)
        if not source.is_file():
            raise RootfsError(f"{source} is missing on this machine.")
        target = self.at(inside or str(source))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
        if mode is not None:
            target.chmod(mode)
        return target

    def copy_tree(self, source: str | Path, inside: str, ignore=None) -> Path:
        target = self.at(inside)
        shutil.copytree(source, target, symlinks=True, ignore=ignore, dirs_exist_ok=True)
        return target

    def symlink(self, target: str, inside: str) -> None:
        link = self.at(inside)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)

    # -- what every runtime image holds --------------------------------------------------

    def add_base(self, *, home: str, state: str) -> None:
        """Users, name resolution, CA certificates, /tmp, and the runtime's state folder."""
        uid = RUNTIME_UID
        self.write(
            "/etc/passwd",
            f"root:x:0:0:root:/root:/bin/sh\n{RUNTIME_USER}:x:{uid}:{uid}:Fleet runtime:{home}:/bin/sh\n",
        )
        self.write("/etc/group", f"root:x:0:\n{RUNTIME_USER}:x:{uid}:\n")
        self.write("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        self.write("/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n")
        self.copy(CA_BUNDLE)
        # OpenSSL's default locations on Debian point at the bundle (Python's ssl module).
        self.symlink(CA_BUNDLE, "/usr/lib/ssl/cert.pem")
        self.symlink("/etc/ssl/certs", "/usr/lib/ssl/certs")
        self.mkdir("/tmp", 0o1777)
        self.mkdir("/root", 0o700)
        for mount_point in ("/proc", "/sys", "/dev"):
            self.mkdir(mount_point)
        self.mkdir(state, 0o750, owner=uid)

    def add_programs(self, names: Iterable[str]) -> None:
        """Host programs (bash and a few coreutils) at /usr/bin; `sh` is bash."""
        for name in names:
            found = shutil.which(name, path="/usr/bin:/bin")
            if not found:
                raise RootfsError(f"The program {name} is missing on this machine.")
            self.copy(found, f"/usr/bin/{name}", mode=0o755)
        if self.at("/usr/bin/bash").exists():
            self.symlink("bash", "/usr/bin/sh")

    def add_shared_libraries(self) -> int:
        """Copy every host library `ldd` names for the ELF files already in the tree (ldd
        lists the whole closure, so one pass is enough). Returns how many were added."""
        needed: set[str] = set()
        elves = list(self.elf_files())
        for elf in elves:
            needed |= self._libraries_of(elf)
        # A wheel's bundled libraries find each other through their loader's rpath, which ldd
        # of one of them alone does not apply: those are here, not missing.
        self.unresolved -= {elf.name for elf in elves}
        for name in ALWAYS_LIBRARIES:
            needed.add(_host_library(name))
        added = 0
        for library in sorted(needed):
            if not self.at(library).exists():
                self.copy(library)
                added += 1
        return added

    def elf_files(self) -> Iterator[Path]:
        for folder, _, files in os.walk(self.path):
            for name in files:
                path = Path(folder, name)
                if path.is_symlink():
                    continue
                with open(path, "rb") as handle:
                    if handle.read(4) == ELF_MAGIC:
                        yield path

    def _libraries_of(self, elf: Path) -> set[str]:
        # ldd fails on static binaries and on ELF files for other systems (a package's musl
        # or macOS prebuilds beside the glibc one): those need nothing from this machine.
        result = subprocess.run(["ldd", str(elf)], capture_output=True, text=True)
        if result.returncode != 0:
            return set()
        root = str(self.path.resolve())
        found = set()
        for line in result.stdout.splitlines():
            parts = line.split()
            if "=>" in parts:
                index = parts.index("=>")
                target = parts[index + 1] if index + 1 < len(parts) else ""
                if target == "not":
                    self.unresolved.add(parts[0])
                    continue
            else:
                target = parts[0] if parts else ""
            if target.startswith("/") and not os.path.realpath(target).startswith(root + os.sep):
                found.add(target)
        return found

    # -- packing -------------------------------------------------------------------------

    def size_bytes(self) -> int:
        total = 0
        for folder, _, files in os.walk(self.path):
            for name in files:
                path = Path(folder, name)
                if not path.is_symlink():
                    total += path.stat().st_size
        return total

    def write_tar(self, out) -> None:
        """The tree as a tar stream: root owns everything but `owners`, whatever user built it
        (Python's tarfile rather than GNU tar, so ownership is set per path)."""

        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            inside = "/" + info.name.removeprefix(".").lstrip("/")
            uid = self.owners.get(inside, 0)
            info.uid = info.gid = uid
            info.uname = info.gname = ""
            return info

        with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            tar.add(self.path, arcname=".", filter=owned)


def _host_library(name: str) -> str:
    for folder in HOST_LIBRARY_DIRS:
        candidate = Path(folder, name)
        if candidate.exists():
            return str(candidate)
    raise RootfsError(f"The library {name} is missing on this machine.")
