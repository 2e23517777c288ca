"""Writes every app shares."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models

from .errors import ValidationFailed

M = TypeVar("M", bound=models.Model)


def model_update(*, instance: M, fields: Iterable[str], data: dict) -> tuple[M, bool]:
    """Set the named `fields` that `data` carries, validate them, and save only the columns
    that changed (plus an `auto_now` column such as updated_at). (instance, whether it changed).

    Only the changed columns are written, so a concurrent write to another column of the row (a
    delivery stamping a rule's last_error) is never overwritten with a stale value.
    """
    changed = [field for field in fields if field in data and getattr(instance, field) != data[field]]
    if not changed:
        return instance, False
    for field in changed:
        setattr(instance, field, data[field])
    others = [f.name for f in instance._meta.concrete_fields if f.name not in changed]
    try:
        instance.full_clean(exclude=others, validate_unique=False, validate_constraints=False)
    except DjangoValidationError as exc:
        raise ValidationFailed(exc.message_dict) from None
    auto_now = [f.name for f in instance._meta.concrete_fields if getattr(f, "auto_now", False)]
    instance.save(update_fields=[*changed, *auto_now])
    return instance, True
