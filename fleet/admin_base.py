"""Admin building blocks any app may use."""

from django.contrib import admin


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """For records that are facts written by the system (events, usage): browse, never edit."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
