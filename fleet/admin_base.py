"""Admin building blocks any app may use: the console's theme (django-unfold) classes, so every
ModelAdmin looks and behaves the same, the read-only admin for facts, and `inline_add`, by which
an app shows its rows on the page of a model of an app below it (llm's provider keys on a user's
and a workspace's page) without that app importing it."""

from collections import defaultdict
from collections.abc import Callable

from unfold.admin import ModelAdmin as ThemedModelAdmin
from unfold.admin import StackedInline, TabularInline

__all__ = ["ModelAdmin", "ReadOnlyModelAdmin", "StackedInline", "TabularInline", "inline_add",
           "register_change_recorder"]

_added_inlines: dict[type, list[type]] = defaultdict(list)

# (request, obj, verb, changed field names) -> None: the audit app's, registered when it is ready
# (it sits above fleet). Called inside the admin's atomic change and delete views.
ChangeRecorder = Callable[[object, object, str, list[str]], None]
_change_recorder: ChangeRecorder | None = None


def register_change_recorder(recorder: ChangeRecorder) -> None:
    global _change_recorder
    _change_recorder = recorder


def _changed_fields(message) -> list[str]:
    """The field labels of the admin's change message ([{"changed": {"fields": [...]}}]): names only."""
    names: list[str] = []
    for part in message if isinstance(message, list) else ():
        for change in part.values() if isinstance(part, dict) else ():
            names.extend(str(name) for name in (change or {}).get("fields", ()))
    return names


def _record(request, obj, verb: str, changed: list[str]) -> None:
    if _change_recorder is not None:
        _change_recorder(request, obj, verb, changed)


def inline_add(model: type, inline: type) -> None:
    """Show `inline` on `model`'s change page (from the adding app's admin module; idempotent)."""
    if inline not in _added_inlines[model]:
        _added_inlines[model].append(inline)


class ModelAdmin(ThemedModelAdmin):
    def get_inlines(self, request, obj):
        added = _added_inlines.get(self.model, []) if obj is not None else []  # change pages only
        return [*super().get_inlines(request, obj), *added]

    # Every change made in the console leaves its audit row beside Django's own LogEntry.
    def log_addition(self, request, obj, message):
        _record(request, obj, "create", _changed_fields(message))
        return super().log_addition(request, obj, message)

    def log_change(self, request, obj, message):
        _record(request, obj, "update", _changed_fields(message))
        return super().log_change(request, obj, message)

    def log_deletions(self, request, queryset):
        for obj in queryset:
            _record(request, obj, "delete", [])
        return super().log_deletions(request, queryset)


class ReadOnlyModelAdmin(ModelAdmin):
    """For records that are facts written by the system (events, usage): browse, never edit."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
