"""Writes and reads of target grants (agents.targets.models.TargetGrant), in the one JSON shape
every platform target's admin routes use:

    "grants": {"allAccounts": false, "users": [<user id>], "userGroups": [<group id>],
               "workspaces": [<workspace id>]}

Who a grant lets deploy is decided in one place only: agents.targets.access.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from uuid import UUID

from django.db import transaction
from rest_framework import serializers

from accounts.models import User, UserGroup
from fleet.api.fields import StrictCharField, uuid_or_none
from fleet.errors import ValidationFailed
from workspaces.models import Workspace

from .models import GranteeKind, TargetGrant

MAX_GRANTEES = 1000  # per list, per request


@dataclass(frozen=True)
class GrantSet:
    all_accounts: bool = False
    users: tuple[UUID, ...] = field(default_factory=tuple)
    user_groups: tuple[UUID, ...] = field(default_factory=tuple)
    workspaces: tuple[UUID, ...] = field(default_factory=tuple)

    def as_json(self) -> dict:
        return {
            "allAccounts": self.all_accounts,
            "users": [str(u) for u in self.users],
            "userGroups": [str(g) for g in self.user_groups],
            "workspaces": [str(w) for w in self.workspaces],
        }


class GrantsIn(serializers.Serializer):
    """The `grants` object of a request: each key given replaces that part, others stay."""

    allAccounts = serializers.BooleanField(required=False)  # noqa: N815 - the API's names
    users = serializers.ListField(child=StrictCharField(), required=False, max_length=MAX_GRANTEES)
    userGroups = serializers.ListField(child=StrictCharField(), required=False, max_length=MAX_GRANTEES)  # noqa: N815
    workspaces = serializers.ListField(child=StrictCharField(), required=False, max_length=MAX_GRANTEES)


class GrantsOut(serializers.Serializer):
    allAccounts = serializers.BooleanField()  # noqa: N815
    users = serializers.ListField(child=serializers.UUIDField())
    userGroups = serializers.ListField(child=serializers.UUIDField())  # noqa: N815
    workspaces = serializers.ListField(child=serializers.UUIDField())


def grants_of_many(execution_target_ids: Iterable[str]) -> dict[str, GrantSet]:
    """Each target's grants, in one query."""
    ids = list(execution_target_ids)
    parts: dict[str, dict] = defaultdict(lambda: {"all_accounts": False, "users": [], "user_groups": [],
                                                  "workspaces": []})
    rows = TargetGrant.objects.filter(execution_target_id__in=ids).order_by("id").values_list(
        "execution_target_id", "kind", "user_id", "group_id", "workspace_id"
    )
    for target_id, kind, user_id, group_id, workspace_id in rows:
        part = parts[target_id]
        if kind == GranteeKind.ALL_ACCOUNTS:
            part["all_accounts"] = True
        elif kind == GranteeKind.USER:
            part["users"].append(user_id)
        elif kind == GranteeKind.USER_GROUP:
            part["user_groups"].append(group_id)
        else:
            part["workspaces"].append(workspace_id)
    return {
        target_id: GrantSet(
            all_accounts=parts[target_id]["all_accounts"],
            users=tuple(parts[target_id]["users"]),
            user_groups=tuple(parts[target_id]["user_groups"]),
            workspaces=tuple(parts[target_id]["workspaces"]),
        )
        for target_id in ids
    }


def grants_of(execution_target_id: str) -> GrantSet:
    return grants_of_many([execution_target_id])[execution_target_id]


def _existing(model, values, field_name: str) -> tuple[UUID, ...]:
    """The ids `values` name, in order, without duplicates; 400 naming `field_name` when one is
    not the id of an existing row."""
    uuids = [uuid_or_none(value) for value in values]
    if None in uuids:
        raise ValidationFailed({f"grants.{field_name}": "Every entry must be an id (UUID)."})
    unique = tuple(dict.fromkeys(uuids))
    found = set(model.objects.filter(pk__in=unique).values_list("pk", flat=True))
    missing = [str(u) for u in unique if u not in found]
    if missing:
        raise ValidationFailed({f"grants.{field_name}": f"No such {model._meta.verbose_name}: {', '.join(missing)}."})
    return unique


def grants_parse(data: dict, *, current: GrantSet | None = None) -> GrantSet:
    """A validated GrantsIn payload onto `current`: the keys it has replace, the rest stay."""
    current = current or GrantSet()
    return GrantSet(
        all_accounts=data.get("allAccounts", current.all_accounts),
        users=_existing(User, data["users"], "users") if "users" in data else current.users,
        user_groups=_existing(UserGroup, data["userGroups"], "userGroups") if "userGroups" in data
        else current.user_groups,
        workspaces=_existing(Workspace, data["workspaces"], "workspaces") if "workspaces" in data
        else current.workspaces,
    )


@transaction.atomic
def target_grants_set(*, execution_target_id: str, grants: GrantSet, created_by=None) -> GrantSet:
    """Make the target's grants exactly `grants` (rows that stay keep their history)."""
    wanted = {(GranteeKind.ALL_ACCOUNTS, None)} if grants.all_accounts else set()
    wanted |= {(GranteeKind.USER, u) for u in grants.users}
    wanted |= {(GranteeKind.USER_GROUP, g) for g in grants.user_groups}
    wanted |= {(GranteeKind.WORKSPACE, w) for w in grants.workspaces}
    existing = {}
    for grant in TargetGrant.objects.select_for_update().filter(execution_target_id=execution_target_id):
        existing[(grant.kind, grant.user_id or grant.group_id or grant.workspace_id)] = grant.pk
    stale = [pk for key, pk in existing.items() if key not in wanted]
    TargetGrant.objects.filter(pk__in=stale).delete()
    column = {GranteeKind.USER: "user_id", GranteeKind.USER_GROUP: "group_id", GranteeKind.WORKSPACE: "workspace_id"}
    TargetGrant.objects.bulk_create(
        [
            TargetGrant(execution_target_id=execution_target_id, kind=kind, created_by=created_by,
                        **({column[kind]: grantee} if grantee else {}))
            for kind, grantee in wanted
            if (kind, grantee) not in existing
        ],
        ignore_conflicts=True,  # a concurrent identical write: the row exists either way
    )
    return grants_of(execution_target_id)


def target_grant_workspace_add(*, execution_target_id: str, workspace: Workspace, created_by=None) -> bool:
    """Share the target with a workspace; True when it was not shared yet."""
    _, created = TargetGrant.objects.get_or_create(
        execution_target_id=execution_target_id, kind=GranteeKind.WORKSPACE, workspace=workspace,
        defaults={"created_by": created_by},
    )
    return created


def target_grant_workspace_remove(*, execution_target_id: str, workspace: Workspace) -> bool:
    """Stop sharing the target with a workspace; True when it was shared."""
    deleted, _ = TargetGrant.objects.filter(
        execution_target_id=execution_target_id, kind=GranteeKind.WORKSPACE, workspace=workspace
    ).delete()
    return bool(deleted)


def target_grants_delete(*, execution_target_id: str) -> None:
    """Drop every grant of a target (the target is being deleted)."""
    TargetGrant.objects.filter(execution_target_id=execution_target_id).delete()
