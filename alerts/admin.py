"""Admin console: rules with their channels, deliveries with their attempts, resend of failures.

The Event admin belongs to the kernel (fleet/admin.py). Channel secrets never appear here.
"""

from __future__ import annotations

from django.contrib import admin, messages

from fleet.admin_base import ModelAdmin, TabularInline

from .models import AlertChannel, AlertRule, Delivery, DeliveryAttempt, DeliveryStatus
from .services import delivery_resend


class AlertChannelInline(TabularInline):
    model = AlertChannel
    fields = ("position", "type", "config", "has_secret")
    readonly_fields = ("position", "type", "config", "has_secret")
    extra = 0
    can_delete = False
    show_change_link = False

    @admin.display(boolean=True, description="signed")
    def has_secret(self, channel: AlertChannel) -> bool:
        return bool(channel.secret)

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # channels are validated by the API (URL safety, recipients); edit them there


@admin.register(AlertRule)
class AlertRuleAdmin(ModelAdmin):
    list_display = ("name", "event_pattern", "workspace", "enabled", "last_fired_at", "last_error")
    list_filter = ("enabled",)
    search_fields = ("name", "event_pattern", "workspace__name")
    fields = ("name", "workspace", "event_pattern", "enabled", "created_by", "last_fired_at", "last_error",
              "created_at", "updated_at")
    readonly_fields = ("workspace", "event_pattern", "created_by", "last_fired_at", "last_error", "created_at",
                       "updated_at")
    list_select_related = ("workspace",)
    inlines = (AlertChannelInline,)

    def has_add_permission(self, request) -> bool:
        return False  # rules are made through the API, which validates them


class DeliveryAttemptInline(TabularInline):
    model = DeliveryAttempt
    fields = ("number", "started_at", "duration_ms", "status_code", "succeeded", "error")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(ModelAdmin):
    list_display = ("id", "rule", "channel_type", "status", "attempts", "next_attempt_at", "created_at", "last_error")
    list_filter = ("status", "channel_type")
    search_fields = ("=id", "rule__name", "event__kind")
    list_select_related = ("rule",)
    readonly_fields = ("id", "rule", "channel", "event", "channel_type", "status", "attempts", "next_attempt_at",
                       "lease_expires_at", "queued_at", "body", "last_error", "created_at", "completed_at")
    inlines = (DeliveryAttemptInline,)
    actions = ("resend",)

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Resend the selected failed deliveries")
    def resend(self, request, queryset):
        failed = list(queryset.filter(status=DeliveryStatus.FAILED))
        for delivery in failed:
            delivery_resend(delivery=delivery)
        skipped = queryset.count() - len(failed)
        self.message_user(request, f"Queued {len(failed)} failed delivery(ies) again.", messages.SUCCESS)
        if skipped:
            self.message_user(request, f"Skipped {skipped} that had not failed.", messages.WARNING)
