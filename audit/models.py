"""The audit log: one append-only row per change, whoever made it and however.

The app sits right above `fleet`, below every app it records, so it holds no foreign key to
their models: the actor is the user row (kept nullable, SET_NULL, so deleting a person keeps
their history) beside a label written at the time, the key and the workspace are plain UUIDs.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

OK = "ok"


class Source(models.TextChoices):
    API = "api"
    CONSOLE = "console"
    COMMAND = "command"
    SIGN_IN = "sign_in"  # the console's sign-in, sign-out and refused sign-ins (Django's auth signals)
    SERVICE = "service"  # an explicit record from a service outside a request the API wraps


class AppendOnly(Exception):
    pass


class AuditEntry(models.Model):
    at = models.DateTimeField(default=timezone.now)
    actor_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    # The e-mail at the time ("(API key)" after it for a key); the e-mail tried for a refused sign-in.
    actor_label = models.CharField(max_length=300, blank=True)
    actor_key_id = models.UUIDField(null=True, blank=True)  # a workspace API key; actor_user is its issuer
    actor_ip = models.GenericIPAddressField(null=True, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices)
    action = models.CharField(max_length=100)
    target_type = models.CharField(max_length=60, blank=True)
    target_id = models.CharField(max_length=100, blank=True)
    workspace_id = models.UUIDField(null=True, blank=True)
    result = models.CharField(max_length=60, default=OK)  # "ok" or the error's code
    detail = models.JSONField(default=list, blank=True)  # names of the fields changed, never their values

    class Meta:
        ordering = ("-at", "-id")
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"
        indexes = [
            models.Index(fields=["at", "id"], name="audit_at_id"),
            models.Index(fields=["workspace_id", "at", "id"], name="audit_workspace_at_id"),
            models.Index(fields=["actor_user", "at"], name="audit_actor_at"),
            models.Index(fields=["action", "at"], name="audit_action_at"),
            models.Index(fields=["target_type", "target_id"], name="audit_target"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor_label or '-'} {self.action} {self.result}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly("Audit entries are never changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly("Audit entries leave only by the retention purge.")


class AuditWorkspace(models.Model):
    """A workspace a row belongs to, one link per workspace: the path's or the key's, and those
    the target is in (an agent shared with two workspaces is in both workspaces' logs). Written
    with its row, gone with it."""

    entry = models.ForeignKey(AuditEntry, on_delete=models.CASCADE, related_name="workspace_links")
    workspace_id = models.UUIDField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=("workspace_id", "entry"), name="audit_workspace_entry")]

    def __str__(self) -> str:
        return f"{self.entry_id} in {self.workspace_id}"
