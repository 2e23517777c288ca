"""Migration drafts: uploaded bundles kept on disk (MIGRATION_DRAFTS_DIR) for
MIGRATION_DRAFT_TTL_HOURS, owned by their uploader, never in the database.

    <dir>/drafts/<id>/bundle.tar.gz   the upload, validated
    <dir>/drafts/<id>/draft.json      {id, ownerId, manifest, expiresAt}
    <dir>/imports/<agent id>.tar.gz   a consumed draft waiting for the agent's provisioning

A deploy consumes a draft by moving its bundle to imports/ (one rename: two deploys cannot both
take it); provisioning restores it before the workload starts and deletes it.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.utils import timezone

from .bundle import bundle_validate
from .errors import BundleInvalid, DraftNotFound, DraftQuotaExceeded

BUNDLE = "bundle.tar.gz"
META = "draft.json"


@dataclass(frozen=True)
class MigrationDraft:
    id: str
    owner_id: str
    manifest: dict
    expires_at: datetime


def _root() -> Path:
    return Path(settings.MIGRATION_DRAFTS_DIR)


def _drafts() -> Path:
    return _root() / "drafts"


def import_path(agent_id) -> Path:
    """Where a consumed draft waits for the agent's provisioning."""
    return _root() / "imports" / f"{uuid.UUID(str(agent_id)).hex}.tar.gz"


def migration_drafts_quota_check(*, user, adding_bytes: int = 0) -> None:
    """409 draft_quota_exceeded when `user` already holds MIGRATION_DRAFTS_MAX_PER_USER live
    drafts, or when `adding_bytes` more would pass MIGRATION_DRAFTS_MAX_BYTES_PER_USER on disk.
    Two uploads of one user at the same instant may both pass; the upload throttle bounds that."""
    count, size = 0, 0
    now = timezone.now()
    if _drafts().is_dir():
        for folder in _drafts().iterdir():
            draft = _load(folder)
            if draft is None or draft.owner_id != str(user.pk) or draft.expires_at <= now:
                continue
            count += 1
            try:
                size += (folder / BUNDLE).stat().st_size
            except FileNotFoundError:  # consumed meanwhile
                count -= 1
    if count >= settings.MIGRATION_DRAFTS_MAX_PER_USER:
        raise DraftQuotaExceeded(f"You hold {count} migration drafts, the most allowed "
                                 f"(MIGRATION_DRAFTS_MAX_PER_USER={settings.MIGRATION_DRAFTS_MAX_PER_USER}); "
                                 "deploy one or let them expire.")
    if size + adding_bytes > settings.MIGRATION_DRAFTS_MAX_BYTES_PER_USER:
        raise DraftQuotaExceeded(f"Your migration drafts would take more than "
                                 f"{settings.MIGRATION_DRAFTS_MAX_BYTES_PER_USER} bytes "
                                 "(MIGRATION_DRAFTS_MAX_BYTES_PER_USER); deploy one or let them expire.")


def migration_draft_create(*, user, upload: BinaryIO, size: int) -> MigrationDraft:
    """Validate an uploaded bundle of `size` bytes and keep it as a draft of `user`, within the
    user's draft quota."""
    migration_drafts_quota_check(user=user, adding_bytes=size)
    manifest = bundle_validate(upload)
    upload.seek(0)
    draft = MigrationDraft(id=str(uuid.uuid4()), owner_id=str(user.pk), manifest=manifest,
                           expires_at=timezone.now() + timedelta(hours=settings.MIGRATION_DRAFT_TTL_HOURS))
    folder = _drafts() / draft.id
    folder.mkdir(parents=True, mode=0o700)
    with open(folder / BUNDLE, "wb") as out:
        shutil.copyfileobj(upload, out, 1024 * 1024)
    meta = {"id": draft.id, "ownerId": draft.owner_id, "manifest": manifest, "expiresAt": draft.expires_at.isoformat()}
    (folder / META).write_text(json.dumps(meta))
    return draft


def _load(folder: Path) -> MigrationDraft | None:
    try:
        meta = json.loads((folder / META).read_text())
        return MigrationDraft(id=meta["id"], owner_id=meta["ownerId"], manifest=meta["manifest"],
                              expires_at=datetime.fromisoformat(meta["expiresAt"]))
    except (OSError, ValueError, KeyError):
        return None


def migration_draft_get(*, user, draft_id: str) -> MigrationDraft:
    """The caller's live draft; 404 for another user's, an unknown or an expired one (which is
    deleted on the way)."""
    try:
        key = str(uuid.UUID(str(draft_id)))
    except ValueError:
        raise DraftNotFound() from None
    folder = _drafts() / key
    draft = _load(folder)
    if draft is None or draft.owner_id != str(user.pk):
        raise DraftNotFound()
    if draft.expires_at <= timezone.now():
        shutil.rmtree(folder, ignore_errors=True)
        raise DraftNotFound("The migration draft has expired; upload the bundle again.")
    return draft


def migration_draft_consume(*, draft: MigrationDraft, agent_id) -> None:
    """Hand the draft's bundle to the new agent's provisioning; the draft is gone after this."""
    folder = _drafts() / draft.id
    target = import_path(agent_id)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.rename(folder / BUNDLE, target)
    except FileNotFoundError:
        raise DraftNotFound("The migration draft was already used.") from None
    shutil.rmtree(folder, ignore_errors=True)


def migration_drafts_expire() -> int:
    """Delete expired drafts and unreadable leftovers (the periodic job), and consumed bundles
    no provisioning took within the draft lifetime (their agent was deleted first); how many went."""
    removed = 0
    now = timezone.now()
    imports = _root() / "imports"
    if imports.is_dir():
        oldest = now.timestamp() - settings.MIGRATION_DRAFT_TTL_HOURS * 3600
        for bundle in imports.glob("*.tar.gz"):
            if bundle.stat().st_mtime < oldest:
                bundle.unlink(missing_ok=True)
                removed += 1
    if not _drafts().is_dir():
        return removed
    for folder in _drafts().iterdir():
        draft = _load(folder)
        # A folder without its metadata may be an upload being written: only old ones go.
        unreadable_and_old = draft is None and folder.stat().st_mtime < now.timestamp() - 3600
        if unreadable_and_old or (draft is not None and draft.expires_at <= now):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


__all__ = ["BundleInvalid", "MigrationDraft", "import_path", "migration_draft_consume", "migration_draft_create",
           "migration_draft_get", "migration_drafts_expire", "migration_drafts_quota_check"]
