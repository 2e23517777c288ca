"""Any change to a user row empties the session user cache of every process (accounts.user_cache):
at once, and again once the change is committed, so no process can cache the row it replaced."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .models import User
from .user_cache import users_changed


@receiver(post_save, sender=User, dispatch_uid="accounts.user_cache.saved")
@receiver(post_delete, sender=User, dispatch_uid="accounts.user_cache.deleted")
def _user_changed(sender, **kwargs) -> None:
    users_changed()
    transaction.on_commit(users_changed)
