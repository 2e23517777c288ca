"""Admin building blocks any app may use: the console's theme (django-unfold) classes, so every
ModelAdmin looks and behaves the same, the read-only admin for facts, and `inline_add`, by which
an app shows its rows on the page of a model of an app below it (llm's provider keys on a user's
and a workspace's page) without that app importing it."""

from collections import defaultdict

from unfold.admin import ModelAdmin as ThemedModelAdmin
from unfold.admin import StackedInline, TabularInline

__all__ = ["ModelAdmin", "ReadOnlyModelAdmin", "StackedInline", "TabularInline", "inline_add"]

_added_inlines: dict[type, list[type]] = defaultdict(list)


def inline_add(model: type, inline: type) -> None:
    """Show `inline` on `model`'s change page (from the adding app's admin module; idempotent)."""
    if inline not in _added_inlines[model]:
        _added_inlines[model].append(inline)


class ModelAdmin(ThemedModelAdmin):
    def get_inlines(self, request, obj):
        added = _added_inlines.get(self.model, []) if obj is not None else []  # change pages only
        return [*super().get_inlines(request, obj), *added]


class ReadOnlyModelAdmin(ModelAdmin):
    """For records that are facts written by the system (events, usage): browse, never edit."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
