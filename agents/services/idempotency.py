"""`Idempotency-Key` on POST /api/agents/deploy: the same key from the same caller within
IDEMPOTENCY_KEY_TTL_HOURS answers the first deploy's status and body instead of making a
second agent (a client retrying after a timeout or a 503 broker_unavailable).

The key's row is written in the deploy's own transaction (services.deploy.agent_deploy), so a
key never names a rolled-back agent, and two requests racing with one key make one agent: the
second waits on the unique index, then answers the first one's agent. The body is stored once
the view has it; until then (or after a 503) a replay answers the agent as it is now."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from fleet.api.principal import Principal
from fleet.errors import Conflict, ValidationFailed
from workspaces.roles import Role

from ..models import Agent, DeployIdempotencyKey
from ..selectors import require_agent_scope

HEADER = "Idempotency-Key"
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")  # visible ASCII, as HTTP header values carry safely


class IdempotencyKeyReused(Conflict):
    code = "idempotency_key_reused"
    default_message = "This Idempotency-Key was already used with a different request body."


class IdempotencyKeyTaken(Exception):
    """Another request with this key committed first: answer its deploy."""


@dataclass(frozen=True)
class DeployKey:
    principal: str
    key: str
    fingerprint: str


@dataclass(frozen=True)
class DeployReplay:
    status_code: int
    body: dict | None  # None: answer `agent` as it is now
    agent: Agent | None


def deploy_key_of(*, principal: Principal, header: str | None, body: dict) -> DeployKey | None:
    """The caller's key from the header (None without one); 400 for a malformed key."""
    if header is None:
        return None
    if not _KEY.match(header):
        raise ValidationFailed({HEADER: ["Use 1 to 255 visible ASCII characters."]})
    who = f"key:{principal.api_key_id}" if principal.is_api_key else f"user:{principal.user.pk}"
    fingerprint = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    return DeployKey(principal=who, key=header, fingerprint=fingerprint)


def _live(deploy_key: DeployKey):
    since = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    return DeployIdempotencyKey.objects.filter(
        principal=deploy_key.principal, key=deploy_key.key, created_at__gte=since
    ).select_related("agent")


def deploy_replay_find(*, principal: Principal, deploy_key: DeployKey) -> DeployReplay | None:
    """The first answer to this key, if it is still live; 409 if it came with another body.
    Only for a caller who may still deploy (a key that lost agents:write gets its 403)."""
    require_agent_scope(principal, Role.EDITOR)
    row = _live(deploy_key).first()
    if row is None:
        return None
    if row.fingerprint != deploy_key.fingerprint:
        raise IdempotencyKeyReused()
    if row.body is None and row.agent is None:
        return None  # its agent is gone and its answer was never stored: deploy anew
    return DeployReplay(status_code=row.status_code, body=row.body, agent=row.agent)


def deploy_key_record(*, deploy_key: DeployKey, agent: Agent) -> None:
    """Inside the deploy's transaction: the key names this agent. IdempotencyKeyTaken when
    another request with the key got there first (the deploy then rolls back)."""
    since = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    DeployIdempotencyKey.objects.filter(
        principal=deploy_key.principal, key=deploy_key.key, created_at__lt=since
    ).delete()  # an expired use of the key frees it
    try:
        with transaction.atomic():
            DeployIdempotencyKey.objects.create(
                principal=deploy_key.principal, key=deploy_key.key, fingerprint=deploy_key.fingerprint, agent=agent
            )
    except IntegrityError as exc:
        raise IdempotencyKeyTaken() from exc


def deploy_key_answer_store(*, deploy_key: DeployKey, status_code: int, body: dict) -> None:
    """The answer the first request got, for the replays."""
    DeployIdempotencyKey.objects.filter(principal=deploy_key.principal, key=deploy_key.key, body__isnull=True).update(
        status_code=status_code, body=body
    )


def deploy_keys_expire() -> int:
    """Beat job (hourly): delete keys past IDEMPOTENCY_KEY_TTL_HOURS."""
    since = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    deleted, _ = DeployIdempotencyKey.objects.filter(created_at__lt=since).delete()
    return deleted
