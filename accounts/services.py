"""Every write to accounts: registration, the first admin, sign-in checks, profile, password."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone
from social_django.models import UserSocialAuth

from fleet.errors import Conflict, InvalidCredentials, InvalidRequest, SignupDisabled
from fleet.services import model_update

from .bot_protection import bot_protection_verify
from .locks import registration_lock
from .models import User
from .oauth import ProviderIdentity
from .tokens import sessions_revoke

MIN_PASSWORD, MAX_PASSWORD = 8, 128  # characters, wherever a password is set


def password_length_problem(password: str) -> str | None:
    """Why `password` is too short or too long to be set, or None when it is fine."""
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        return f"The password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long."
    return None


class PasswordNotSet(InvalidRequest):
    code = "password_not_set"
    default_message = "This account signs in with OAuth and has no password to change."


def email_is_valid(email: str) -> bool:
    """An address we can store: well formed and at most 255 characters (User.email)."""
    if len(email) > 255:
        return False
    try:
        validate_email(email)
    except DjangoValidationError:
        return False
    return True


def email_taken(email: str) -> bool:
    return User.objects.filter(email__iexact=email.strip()).exists()


def _first_user_role() -> str:
    """Admin for the first user of an empty self-hosted installation; call under the lock."""
    if settings.PLATFORM_MODE == "selfhosted" and not User.objects.exists():
        return User.Role.ADMIN
    return User.Role.USER


@transaction.atomic
def user_register(
    *,
    email: str,
    password: str | None,
    name: str | None = None,
    provider: str | None = None,
) -> User:
    """Create an account (password or OAuth); the first on an empty self-hosted install is admin.

    Refuses with 403 SIGNUP_DISABLED when registrations are off and 409 when the email exists.
    """
    if not settings.SIGNUP_ENABLED:
        raise SignupDisabled()
    registration_lock()
    if email_taken(email):
        raise Conflict("An account already exists for this email.")
    try:
        with transaction.atomic():
            return User.objects.create_user(
                email, password, name=name or None, provider=provider, role=_first_user_role()
            )
    except IntegrityError as exc:  # the case-insensitive unique index, should a writer slip past
        raise Conflict("An account already exists for this email.") from exc


def user_signup(*, email: str, password: str, bot_protection_token: str | None, remote_ip: str | None) -> User:
    """Public password signup: the checks in the contract's order, then user_register."""
    if not settings.SIGNUP_ENABLED:
        raise SignupDisabled()
    bot_protection_verify(token=bot_protection_token, remote_ip=remote_ip)
    return user_register(email=email, password=password)


@transaction.atomic
def user_create_first_admin(*, email: str, password: str) -> User | None:
    """The first platform admin, or None when one exists already (bootstrap_admin)."""
    registration_lock()
    if User.objects.filter(role=User.Role.ADMIN).exists():
        return None
    if email_taken(email):
        raise Conflict(f"A user with the email {email} already exists.")
    return User.objects.create_user(email, password, role=User.Role.ADMIN)


def user_authenticate(*, email: str, password: str) -> User:
    """The active user with this email and password, or 401 invalid_credentials.

    Unknown emails and OAuth-only accounts (no usable password) run the default hasher once
    too, as checking a real password does, so the answer's timing tells nothing.
    """
    user = User.objects.filter(email__iexact=email.strip()).first()
    if user is None or not user.has_usable_password() or not user.is_active:
        make_password(password)
        raise InvalidCredentials("The email or password is incorrect.")
    if not user.check_password(password):
        raise InvalidCredentials("The email or password is incorrect.")
    return user


def user_record_login(*, user: User) -> None:
    """Note when the user last signed in (shown in the admin console)."""
    user.last_login = timezone.now()
    User.objects.filter(pk=user.pk).update(last_login=user.last_login)


_PROFILE_FIELDS = ("name", "avatar")


@transaction.atomic
def user_profile_update(*, user: User, data: dict) -> User:
    """Set the display name and/or avatar; `data` holds only validated profile fields."""
    return model_update(instance=user, fields=_PROFILE_FIELDS, data=data)[0]


@transaction.atomic
def user_password_change(*, user: User, current_password: str, new_password: str) -> User:
    if not user.has_usable_password():
        raise PasswordNotSet()
    if not user.check_password(current_password):
        raise InvalidCredentials("The current password is incorrect.")
    user.set_password(new_password)
    user.save(update_fields=["password"])
    sessions_revoke(user=user)  # a changed password ends every session, this one included
    return user


def _display_name(value) -> str | None:
    """A provider's display name as ours: a trimmed string of at most 100 characters."""
    if not isinstance(value, str):
        return None
    value = "".join(ch for ch in value if ch.isprintable()).strip()
    return value[:100] or None


@transaction.atomic
def user_oauth_sign_in(*, identity: ProviderIdentity) -> User:
    """The user a verified provider identity signs in as, linking or registering as needed.

    A linked identity signs in its user. An unlinked one is linked to the account with the
    same (provider-verified) email, or registers a new account, which SIGNUP_ENABLED=false
    refuses with 403 SIGNUP_DISABLED.
    """
    link = (
        UserSocialAuth.objects.select_related("user")
        .filter(provider=identity.backend_name, uid=identity.uid)
        .first()
    )
    if link is not None:
        if not link.user.is_active:
            raise InvalidCredentials("This account is disabled.")
        return link.user
    email = (identity.email or "").strip()
    if not email_is_valid(email):
        raise InvalidCredentials(f"Your {identity.provider} account shares no verified email address we can use.")
    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        user = user_register(
            email=email, password=None, name=_display_name(identity.name), provider=identity.provider
        )
    elif not user.is_active:
        raise InvalidCredentials("This account is disabled.")
    try:
        with transaction.atomic():
            UserSocialAuth.objects.create(
                user=user,
                provider=identity.backend_name,
                uid=identity.uid,
                extra_data=identity.extra_data,
            )
    except IntegrityError:  # a concurrent sign-in linked the same identity first
        link = UserSocialAuth.objects.select_related("user").get(
            provider=identity.backend_name, uid=identity.uid
        )
        return link.user
    return user
