"""User groups: reads and writes. Platform admins make groups so a platform target (a cluster,
a Remote Docker host, Proxmox) can be granted to many users at once (agents.targets.grants)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from django.db.models.functions import Lower

from fleet.api.fields import uuid_or_none
from fleet.errors import Conflict, NotFound, ValidationFailed
from fleet.services import model_update

from .models import User, UserGroup, UserGroupMember

GROUP_NOT_FOUND = "User group not found."
USER_NOT_FOUND = "User not found."


class GroupNameTaken(Conflict):
    code = "group_name_taken"
    default_message = "A user group with this name already exists."


def user_group_list() -> QuerySet[UserGroup]:
    return UserGroup.objects.annotate(member_count=Count("memberships")).order_by("name", "id")


def user_group_get(*, group_id) -> UserGroup:
    group = user_group_list().filter(pk=uuid_or_none(group_id)).first() if uuid_or_none(group_id) else None
    if group is None:
        raise NotFound(GROUP_NOT_FOUND)
    return group


def user_group_members(*, group: UserGroup) -> QuerySet[UserGroupMember]:
    return group.memberships.select_related("user").order_by(Lower("user__email"), "user_id")


def _clean_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise ValidationFailed({"name": "This field may not be blank."})
    return name


def _name_taken(name: str, *, exclude=None) -> bool:
    others = UserGroup.objects.filter(name__iexact=name)
    return others.exclude(pk=exclude).exists() if exclude else others.exists()


def _users(user_ids) -> list[User]:
    """The users the ids name, every one of them (400 naming the field otherwise)."""
    uuids = [uuid_or_none(value) for value in user_ids]
    users = list(User.objects.filter(pk__in=[u for u in uuids if u]))
    if None in uuids or len(users) != len(set(uuids)):
        raise ValidationFailed({"members": "Every member must be the id of an existing user."})
    return users


@transaction.atomic
def user_group_create(*, name: str, description: str = "", member_ids=()) -> UserGroup:
    name = _clean_name(name)
    if _name_taken(name):
        raise GroupNameTaken()
    users = _users(member_ids)
    try:
        with transaction.atomic():
            group = UserGroup.objects.create(name=name, description=description.strip())
    except IntegrityError:  # a concurrent create with the same name won
        raise GroupNameTaken() from None
    UserGroupMember.objects.bulk_create([UserGroupMember(group=group, user=user) for user in users])
    return user_group_get(group_id=group.pk)


@transaction.atomic
def user_group_update(*, group: UserGroup, data: dict) -> UserGroup:
    data = dict(data)
    if "name" in data:
        data["name"] = _clean_name(data["name"])
        if _name_taken(data["name"], exclude=group.pk):
            raise GroupNameTaken()
    if "description" in data:
        data["description"] = data["description"].strip()
    try:
        with transaction.atomic():
            model_update(instance=group, fields=("name", "description"), data=data)
    except IntegrityError:
        raise GroupNameTaken() from None
    return user_group_get(group_id=group.pk)


def user_group_delete(*, group: UserGroup) -> None:
    """Delete the group; its memberships and the grants naming it go with it (cascade)."""
    group.delete()


def _user_by(*, user_id=None, email=None) -> User:
    user = None
    if user_id is not None:
        uuid = uuid_or_none(user_id)
        user = User.objects.filter(pk=uuid).first() if uuid else None
    elif email is not None:
        user = User.objects.filter(email__iexact=email.strip()).first()
    if user is None:
        raise NotFound(USER_NOT_FOUND)
    return user


def user_group_member_add(*, group: UserGroup, user_id=None, email=None) -> tuple[UserGroupMember, bool]:
    """(membership, created): adding someone already in the group changes nothing."""
    if (user_id is None) == (email is None):
        raise ValidationFailed({"userId": "Give exactly one of userId and email."})
    user = _user_by(user_id=user_id, email=email)
    member, created = UserGroupMember.objects.get_or_create(group=group, user=user)
    return member, created


def user_group_member_remove(*, group: UserGroup, user_id) -> None:
    uuid = uuid_or_none(user_id)
    deleted, _ = UserGroupMember.objects.filter(group=group, user_id=uuid).delete() if uuid else (0, None)
    if not deleted:
        raise NotFound("This user is not a member of the group.")
