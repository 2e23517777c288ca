"""Accounts: the platform's users."""

from __future__ import annotations

import uuid

from django.contrib.auth.base_user import AbstractBaseUser, BaseUserManager
from django.db import models
from django.db.models.functions import Lower


class UserManager(BaseUserManager):
    use_in_migrations = True

    def get_by_natural_key(self, email):
        return self.get(email__iexact=email)

    def create_user(self, email: str, password: str | None = None, **fields):
        user = self.model(email=self.normalize_email(email).strip(), **fields)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **fields):
        fields["role"] = User.Role.ADMIN
        return self.create_user(email, password, **fields)


class User(AbstractBaseUser):
    class Role(models.TextChoices):
        USER = "user", "User"
        ADMIN = "admin", "Platform admin"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    email = models.EmailField(max_length=255, unique=True)
    name = models.CharField(max_length=100, null=True, blank=True)
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.USER)
    provider = models.CharField(
        max_length=40, null=True, blank=True, help_text="OAuth provider, or empty for password accounts"
    )
    avatar = models.TextField(null=True, blank=True, help_text="data:image/...;base64 URL, at most 500 KB")
    is_active = models.BooleanField(default=True)
    # Every session JWT carries the version it was issued under; bumping it (logout, password
    # change, "sign out everywhere") ends all of them at once (accounts.tokens).
    token_version = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ("created_at",)
        constraints = [
            models.UniqueConstraint(Lower("email"), name="accounts_user_email_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.email

    @property
    def is_platform_admin(self) -> bool:
        return self.role == self.Role.ADMIN

    # The Django admin console is for platform admins only.
    @property
    def is_staff(self) -> bool:
        return self.is_active and self.is_platform_admin

    @property
    def is_superuser(self) -> bool:
        return self.is_staff

    def has_perm(self, perm, obj=None) -> bool:
        return self.is_staff

    def has_perms(self, perm_list, obj=None) -> bool:
        return self.is_staff

    def has_module_perms(self, app_label) -> bool:
        return self.is_staff



class UserGroup(models.Model):
    """A named set of users, made by platform admins so a platform target can be granted to
    many people at once (agents.targets grants name groups)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    description = models.CharField(max_length=500, blank=True, default="")
    members = models.ManyToManyField(User, through="UserGroupMember", related_name="user_groups", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("name", "id")
        constraints = [models.UniqueConstraint(Lower("name"), name="accounts_user_group_name_ci_unique")]

    def __str__(self) -> str:
        return self.name


class UserGroupMember(models.Model):
    group = models.ForeignKey(UserGroup, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="group_memberships")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("group", "user"), name="accounts_user_group_member_unique")]
        indexes = [models.Index(fields=("user", "group"))]

    def __str__(self) -> str:
        return f"{self.user} in {self.group}"
