"""Admin console: rules with their channels, deliveries with their attempts, resend of failures.

Rules are made and changed as the alert-rule routes make them: their input (AlertRuleInput, the
channels as the API writes them) and their services; a rule's test sends a test alert through its
channels. Channel secrets never appear here: they read back as "[REDACTED]", which keeps them.
The Event admin belongs to the kernel (fleet/admin.py).
"""

from __future__ import annotations

from django.contrib import admin, messages

from fleet.admin_base import ModelAdmin, TabularInline
from fleet.admin_forms import ServiceForm, ServiceFormAdmin, api_json_field

from .models import AlertRule, Delivery, DeliveryAttempt, DeliveryStatus
from .serializers import AlertRuleInput, ChannelsField
from .services import alert_rule_create, alert_rule_delete, alert_rule_test, alert_rule_update, delivery_resend

CHANNELS_HELP = ('The API\'s "channels" array, e.g. [{"type": "webhook", "url": "https://hooks.example.com/x", '
                 '"secret": "..."}, {"type": "email", "to": ["oncall@example.com"]}]. Secrets read back as '
                 '"[REDACTED]": leave that to keep them.')


class AlertRuleForm(ServiceForm):
    api_input = AlertRuleInput
    api_field_names = {"eventPattern": "event_pattern"}
    channels = api_json_field(CHANNELS_HELP, required=True)
    fixed_on_change = ("workspace",)  # a rule stays in its workspace

    class Meta:
        model = AlertRule
        fields = ("name", "workspace", "event_pattern", "enabled", "channels")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.adding:
            self.initial["channels"] = ChannelsField().to_representation(self.instance.channels)

    def apply(self, data, api):
        if self.adding:
            return alert_rule_create(workspace=data["workspace"], created_by=self.acting_user, **api.service_kwargs())
        return alert_rule_update(rule=self.instance, **api.service_kwargs())


@admin.register(AlertRule)
class AlertRuleAdmin(ServiceFormAdmin):
    form = AlertRuleForm
    list_display = ("name", "event_pattern", "workspace", "enabled", "last_fired_at", "last_error")
    list_filter = ("enabled",)
    search_fields = ("name", "event_pattern", "workspace__name")
    list_select_related = ("workspace",)
    readonly_fields = ("created_by", "last_fired_at", "last_error", "created_at", "updated_at")
    actions = ("send_test",)

    def remove(self, rule):
        alert_rule_delete(rule=rule)

    @admin.action(description="Send a test alert through the selected rules' channels")
    def send_test(self, request, queryset):
        rules = list(queryset)
        for rule in rules:
            alert_rule_test(rule=rule)
        self.message_user(request, f"Sent a test alert for {len(rules)} rule(s): emails now, webhooks queued.",
                          messages.SUCCESS)


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
