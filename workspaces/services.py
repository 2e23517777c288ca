"""Every write to workspaces, memberships and API keys.

The role rules for members live here, next to the writes they guard: the owner is never
demoted or removed, `owner` is never granted, and only the owner grants or takes away
`admin`. The caller's role comes from `workspaces.access.workspace_access`.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from fleet.errors import Conflict, Forbidden, NotFound, ValidationFailed
from fleet.services import model_update

from .keys import api_key_digest, api_key_generate, api_key_prefix
from .models import ApiKey, Invitation, Membership, Workspace
from .roles import Role, Scope


@transaction.atomic
def workspace_create(*, owner, name: str) -> Workspace:
    """A new workspace; its creator is its owner member."""
    workspace = Workspace.objects.create(owner=owner, name=name)
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER.label)
    return workspace


@transaction.atomic
def workspace_delete(*, workspace: Workspace) -> None:
    """Delete the workspace with its memberships, API keys and agent assignments.

    The agents themselves are not touched: they keep running and stay with their owners.
    """
    workspace.delete()


def _grant_check(*, acting_role: Role, role: Role) -> None:
    if role not in Role.grantable():
        raise ValidationFailed(
            {"role": ["The role 'owner' cannot be granted; a workspace has one owner, its creator."]}
        )
    if role >= Role.ADMIN and acting_role < Role.OWNER:
        raise Forbidden("Only the workspace owner can grant the role 'admin'.")


def _target_check(*, acting_role: Role, membership: Membership, verb: str) -> None:
    if membership.rank is Role.OWNER:
        raise Forbidden(f"The workspace owner cannot be {verb}.")
    if membership.rank >= Role.ADMIN and acting_role < Role.OWNER:
        raise Forbidden("Only the workspace owner can take away the role 'admin'.")


def _membership_create(*, workspace: Workspace, user, role: Role) -> Membership:
    """The row, or 409 when the user is already a member (two concurrent adds of the same user
    leave one row and the loser gets the 409)."""
    if Membership.objects.filter(workspace=workspace, user=user).exists():
        raise Conflict("The user is already a member of this workspace.")
    try:
        # A savepoint, so a lost race leaves the outer transaction usable.
        with transaction.atomic():
            return Membership.objects.create(workspace=workspace, user=user, role=role.label)
    except IntegrityError:
        raise Conflict("The user is already a member of this workspace.") from None


@transaction.atomic
def membership_add(*, workspace: Workspace, acting_role: Role, email: str, role: Role) -> Membership:
    """Add an existing user (found by email, case-insensitive) with `role` at once, for code
    that acts for both sides (the test factories). The API invites instead
    (`invitation_create`): its answer must not tell whether an email has an account."""
    _grant_check(acting_role=acting_role, role=role)
    user = get_user_model().objects.filter(email__iexact=email.strip(), is_active=True).first()
    if user is None:
        raise NotFound("No user has this email address.")
    return _membership_create(workspace=workspace, user=user, role=role)


def _invitation_email(email: str) -> str:
    email = email.strip().lower()
    try:
        validate_email(email)
    except DjangoValidationError:
        raise ValidationFailed({"email": ["Enter a valid email address."]}) from None
    return email


@transaction.atomic
def invitation_create(*, workspace: Workspace, invited_by, acting_role: Role, email: str, role: Role) -> Invitation:
    """Invite `email` with `role` (what adding a member does): the same answer whether the
    address has an account, has none, or has a deactivated one. Inviting it again
    replaces the role and renews the expiry. 409 only for an address of a current member, whom
    the admin sees in the member list anyway."""
    _grant_check(acting_role=acting_role, role=role)
    email = _invitation_email(email)
    if Membership.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise Conflict("The user is already a member of this workspace.")
    invitation, _ = Invitation.objects.update_or_create(
        workspace=workspace, email=email,
        defaults={"role": role.label, "invited_by": invited_by,
                  "expires_at": timezone.now() + timedelta(days=settings.WORKSPACE_INVITATION_DAYS)},
    )
    return invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user) -> Membership:
    """The invitee (the account with the invited email, checked by the selector) joins with the
    invited role; the invitation is used up. 409 when they are a member already."""
    # The invitation's row only (`of`): locking its workspace too would deadlock with a
    # concurrent membership insert (its foreign-key check shares that row).
    invitation = Invitation.objects.select_for_update(of=("self",)).filter(pk=invitation.pk).first()
    if invitation is None:  # accepted or declined by a request that held the lock first
        raise NotFound("No such invitation.")
    invitation.delete()
    return _membership_create(workspace=invitation.workspace, user=user, role=invitation.rank)


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, acting_role: Role) -> None:
    """An admin withdraws an invitation (one for `admin` only the owner, who alone grants it)."""
    if invitation.rank >= Role.ADMIN and acting_role < Role.OWNER:
        raise Forbidden("Only the workspace owner can withdraw an invitation for the role 'admin'.")
    invitation.delete()


def invitation_decline(*, invitation: Invitation) -> None:
    invitation.delete()


@transaction.atomic
def membership_update(*, membership: Membership, acting_role: Role, role: Role) -> Membership:
    """Change a member's role (never the owner's, never to owner; admin only by the owner)."""
    _grant_check(acting_role=acting_role, role=role)
    _target_check(acting_role=acting_role, membership=membership, verb="demoted")
    return model_update(instance=membership, fields=["role"], data={"role": role.label})[0]


@transaction.atomic
def membership_remove(*, membership: Membership, acting_user, acting_role: Role) -> None:
    """Remove a member. Anyone but the owner may leave; removing others needs `admin`.

    The member's API keys for this workspace stop working at once (the verifier checks
    membership), and are revoked so the admin console shows them as dead.
    """
    leaving = membership.user_id == acting_user.pk
    if membership.rank is Role.OWNER:
        raise Forbidden("The workspace owner cannot be removed.")
    if not leaving:
        if acting_role < Role.ADMIN:
            raise Forbidden("This needs the role 'admin' in the workspace.")
        _target_check(acting_role=acting_role, membership=membership, verb="removed")
    ApiKey.objects.filter(
        workspace_id=membership.workspace_id, created_by_id=membership.user_id, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
    membership.delete()


def _clean_scopes(scopes: list[str]) -> list[str]:
    unknown = sorted(set(scopes) - set(Scope.ALL))
    if unknown:
        raise ValidationFailed({"scopes": [f"Unknown scope '{s}'; use {', '.join(Scope.ALL)}." for s in unknown]})
    if not scopes:
        raise ValidationFailed({"scopes": ["Give at least one scope."]})
    return [s for s in Scope.ALL if s in scopes]


@transaction.atomic
def api_key_create(*, workspace: Workspace, created_by, name: str, scopes: list[str]) -> tuple[ApiKey, str]:
    """A new key and its raw secret; the secret is returned here once and never stored.

    Only a member may issue one: a key works only while its issuer is a member, so a
    platform admin stepping into a foreign workspace would mint a dead key.
    """
    scopes = _clean_scopes(scopes)
    if not Membership.objects.filter(workspace=workspace, user=created_by).exists():
        raise Forbidden("Only members of the workspace can issue its API keys.")
    raw = api_key_generate()
    key = ApiKey.objects.create(
        workspace=workspace,
        created_by=created_by,
        name=name,
        prefix=api_key_prefix(raw),
        digest=api_key_digest(raw),
        scopes=scopes,
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Revoke at once; the verifier refuses the key from the next request on."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key
