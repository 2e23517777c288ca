"""Admin building blocks any app may use: the console's theme (django-unfold) classes, so every
ModelAdmin looks and behaves the same, and the read-only admin for facts."""

from unfold.admin import ModelAdmin, StackedInline, TabularInline

__all__ = ["ModelAdmin", "ReadOnlyModelAdmin", "StackedInline", "TabularInline"]


class ReadOnlyModelAdmin(ModelAdmin):
    """For records that are facts written by the system (events, usage): browse, never edit."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
