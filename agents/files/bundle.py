"""The export bundle: a `.tar.gz` with `manifest.json` and `state/`.

Written by `bundle_write` into a file (tar headers and blocks fed through one gzip compressor
as the engine's archive arrives), never held whole in memory; read back by `bundle_validate`, which walks the
whole upload once and refuses anything but `manifest.json` and regular files and folders under
`state/`, and the secrets files an export leaves out (one rule for both: `is_secret_path`).
"""

from __future__ import annotations

import json
import posixpath
import tarfile
import time
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from django.utils import timezone

from fleet.api.parsers import loads

from ..backends.tarstream import ChunkReader
from ..families import FAMILIES
from ..models import Agent
from .bundle_walk import BundleWalk
from .errors import BundleInvalid

FORMAT = "fleet-agent-bundle"
VERSION = 1
MANIFEST = "manifest.json"
STATE = "state"
CHUNK = 64 * 1024
MAX_MANIFEST_BYTES = 256 * 1024

# Files of a runtime's state that hold secrets and never leave in an export: Hermes's `.env`
# (provider and integration keys), OpenClaw's config (channel tokens, MCP credentials), the
# device identities and auth profiles both keep, exec approvals (a socket token), any private
# key, and the credential stores tools keep under HOME (git, netrc, npm, PyPI, PostgreSQL, gh,
# Docker, kubectl, AWS, gcloud, GnuPG).
SECRET_NAMES = {".env", "auth.json", "openclaw.json", "auth-profiles.json", "credentials.json",
                "exec-approvals.json", ".git-credentials", ".netrc", ".npmrc", ".pypirc", ".pgpass"}
SECRET_FOLDERS = {"identity", "credentials", "devices", ".ssh", ".gnupg", ".aws", ".kube"}
SECRET_PREFIXES = ("openclaw.json.", ".env.", "id_")
SECRET_SUFFIXES = (".pem", ".key", ".env")
# Whole paths (their last parts) that are secret only together: a `config.json` is not, Docker's is.
SECRET_PATHS = ((".config", "gh", "hosts.yml"), (".docker", "config.json"), (".config", "gcloud"))
# Files secret at the state folder's root only: Hermes's config.yaml ($HERMES_HOME/config.yaml,
# the model's key as Fleet writes it, and any key its owner put there), as openclaw.json is.
SECRET_ROOT_FILES = {"config.yaml"}


def is_secret_path(relative: str) -> bool:
    """The one rule for secrets in a runtime's state: the files API refuses them, an export leaves
    them out. Matched on names, folders and path endings anywhere under the state folder (HOME is
    one of its folders), never on contents."""
    parts = [p for p in relative.split("/") if p]
    if not parts:
        return False
    name = parts[-1]
    return (
        (len(parts) == 1 and name in SECRET_ROOT_FILES)
        or name in SECRET_NAMES
        or name in SECRET_FOLDERS
        or name.startswith(SECRET_PREFIXES)
        or name.endswith(SECRET_SUFFIXES)
        or any(part in SECRET_FOLDERS for part in parts[:-1])
        or any(_contains(parts, ending) for ending in SECRET_PATHS)
    )


def _contains(parts: list[str], ending: tuple[str, ...]) -> bool:
    """`ending` as consecutive parts of the path: the path is that file or folder, or inside it."""
    size = len(ending)
    return any(tuple(parts[i:i + size]) == ending for i in range(len(parts) - size + 1))


def manifest_for(agent: Agent) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "exportedAt": timezone.now().isoformat(),
        "name": agent.name,
        "runtime_family": agent.runtime_family,
        "sandbox_profile": agent.sandbox_profile or None,
        "resources": {"vcpu": float(agent.vcpu), "ram_mb": agent.ram_mb, "disk_gb": agent.disk_gb},
        "budgets": [
            {"period": b.period, "limit_micros": b.limit_micros, "soft_threshold_pct": float(b.soft_threshold_pct)}
            for b in agent.budgets.order_by("period")
        ],
    }


class StateArchiveCut(Exception):
    """The engine's archive of the state ended before its end-of-archive marker: a file shrank
    while the engine read it (a runtime rewriting its state), or the connection dropped."""


def _header(name: str, *, is_dir: bool, size: int, mode: int, mtime: float) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.size, info.mode, info.mtime = (0 if is_dir else size), mode & 0o777, int(mtime)
    return info.tobuf(format=tarfile.PAX_FORMAT)


def bundle_write(manifest: dict, state_tar: Iterator[bytes], out: BinaryIO) -> None:
    """Write the `.tar.gz` bundle into `out`: the manifest, then the state folder's folders and
    regular files (secrets files, links and special files left out), through one gzip compressor
    as the engine's archive arrives. StateArchiveCut when that archive is incomplete."""
    gzip = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: gzip framing
    body = json.dumps(manifest, indent=2).encode()
    out.write(gzip.compress(_header(MANIFEST, is_dir=False, size=len(body), mode=0o644, mtime=time.time())
                            + body + b"\0" * (-len(body) % tarfile.BLOCKSIZE)))
    try:
        _copy_state_members(state_tar, lambda data: out.write(gzip.compress(data)))
    except (tarfile.ReadError, EOFError) as exc:
        raise StateArchiveCut(str(exc)) from None
    out.write(gzip.compress(b"\0" * (tarfile.BLOCKSIZE * 2)) + gzip.flush())


def _copy_state_members(state_tar: Iterator[bytes], write) -> None:
    reader = ChunkReader(state_tar)
    with tarfile.open(fileobj=reader, mode="r|") as source:
        for member in source:
            _, _, relative = member.name.partition("/")  # the engine names the root "state"
            relative = posixpath.normpath(relative) if relative else ""
            if relative in ("", ".") and member.isdir():
                write(_header(STATE, is_dir=True, size=0, mode=member.mode, mtime=member.mtime))
                continue
            if relative.startswith("..") or not (member.isfile() or member.isdir()) or is_secret_path(relative):
                continue
            write(_header(f"{STATE}/{relative}", is_dir=member.isdir(), size=member.size, mode=member.mode,
                          mtime=member.mtime))
            if member.isfile():
                handle = source.extractfile(member)
                while block := handle.read(CHUNK):  # tarfile.ReadError when the member is cut
                    write(block)
                write(b"\0" * (-member.size % tarfile.BLOCKSIZE))
        # tarfile takes an archive that stops between two members for a finished one.
        if not reader.ends_archive_at(source.offset):
            raise StateArchiveCut("The archive stopped before its end-of-archive marker.")


# -- validation of an uploaded bundle ---------------------------------------------------------


def _check_name(name: str) -> str:
    if not name or name.startswith("/") or "\\" in name or "\x00" in name:
        raise BundleInvalid(f"The bundle holds an entry with an absolute or malformed path: {name[:100]!r}.")
    if ".." in name.split("/"):
        raise BundleInvalid(f"The bundle holds an entry that climbs out with '..': {name[:100]!r}.")
    normal = posixpath.normpath(name)
    if normal != MANIFEST and normal != STATE and not normal.startswith(STATE + "/"):
        raise BundleInvalid(f"The bundle holds an entry outside state/: {name[:100]!r}.")
    return normal


def _number(value, field: str, *, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise BundleInvalid(f"manifest.json: {field} must be a number between {low:g} and {high:g}.")
    return value


def manifest_clean(raw: bytes) -> dict:
    """The manifest's fields Fleet uses, checked (400 invalid_bundle when malformed)."""
    try:
        data = loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise BundleInvalid("manifest.json is not valid JSON.") from None
    except Exception as exc:  # the input layer's own refusals (NUL, depth, numbers)
        raise BundleInvalid(f"manifest.json: {getattr(exc, 'message', 'malformed')}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise BundleInvalid(f"manifest.json is not a {FORMAT} version {VERSION} manifest.")
    name, family = data.get("name"), data.get("runtime_family")
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise BundleInvalid("manifest.json: name must be a string of 1 to 100 characters.")
    if family not in FAMILIES:
        raise BundleInvalid(f"manifest.json: runtime_family must be one of {', '.join(sorted(FAMILIES))}.")
    profile = data.get("sandbox_profile")
    if profile is not None and (not isinstance(profile, str) or len(profile) > 50):
        raise BundleInvalid("manifest.json: sandbox_profile must be a string or null.")
    resources = data.get("resources") or {}
    if not isinstance(resources, dict):
        raise BundleInvalid("manifest.json: resources must be an object.")
    cleaned_resources = {}
    for field, high in (("vcpu", 1024), ("ram_mb", 1 << 24), ("disk_gb", 1 << 20)):
        if resources.get(field) is not None:
            cleaned_resources[field] = _number(resources[field], f"resources.{field}", low=0, high=high)
    budgets = data.get("budgets") or []
    if not isinstance(budgets, list) or len(budgets) > 10:
        raise BundleInvalid("manifest.json: budgets must be a list.")
    cleaned_budgets = []
    for budget in budgets:
        if not isinstance(budget, dict) or budget.get("period") not in ("daily", "weekly", "monthly"):
            raise BundleInvalid("manifest.json: each budget needs a period of daily, weekly or monthly.")
        cleaned_budgets.append({
            "period": budget["period"],
            "limit_micros": int(_number(budget.get("limit_micros"), "budgets.limit_micros", low=1, high=10**18)),
            "soft_threshold_pct": _number(budget.get("soft_threshold_pct", 80), "budgets.soft_threshold_pct",
                                          low=1, high=100),
        })
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": name.strip(),
        "runtime_family": family,
        "sandbox_profile": profile or None,
        "resources": cleaned_resources,
        "budgets": cleaned_budgets,
    }


def bundle_validate(upload: BinaryIO) -> dict:
    """Walk an uploaded `.tar.gz` once, in bounded pieces (bundle_walk); its cleaned manifest, or
    400 invalid_bundle, or 413 bundle_too_large naming the limit a bomb ran into. A secrets file
    export leaves out (is_secret_path) is refused too: an export never holds one, so a bundle that
    does was made or edited elsewhere and would plant a runtime's config (gateway auth, plugins)."""
    manifest = None
    walk = BundleWalk(upload)
    try:
        for entry in walk.entries():
            name = _check_name(entry.name)
            if entry.type in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                raise BundleInvalid(f"The bundle holds a link: {name[:100]!r}.")
            if not (entry.is_file or entry.is_dir):
                raise BundleInvalid(f"The bundle holds a special file: {name[:100]!r}.")
            if name == MANIFEST:
                if manifest is not None or not entry.is_file or entry.size > MAX_MANIFEST_BYTES:
                    raise BundleInvalid("The bundle's manifest.json is repeated, not a file or too large.")
                manifest = manifest_clean(walk.content(entry))
                continue
            if name != STATE and is_secret_path(name[len(STATE) + 1:]):
                raise BundleInvalid(f"The bundle holds {name[:200]}, a file of the runtime's secrets that an "
                                    "export leaves out; remove it from the bundle.")
    except (EOFError, zlib.error, OSError, UnicodeError) as exc:
        raise BundleInvalid(f"The bundle is not a readable .tar.gz ({type(exc).__name__}).") from None
    if manifest is None:
        raise BundleInvalid("The bundle has no manifest.json.")
    return manifest
