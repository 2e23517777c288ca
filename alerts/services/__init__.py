"""Every write of the alerts app. Import from here: `from alerts.services import alert_rule_create`."""

from .delivery import (
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    deliveries_attempt,
    deliveries_sweep,
    delivery_attempt,
    delivery_claim,
    delivery_resend,
)
from .dispatch import deliveries_dispatch, dispatch_request, event_dispatch_request
from .enqueue import deliveries_enqueue_on_commit, deliveries_publish, deliveries_publish_by_channel
from .fanout import FAN_OUT_BATCH, FAN_OUT_GRACE, events_fan_out, events_fan_out_and_publish
from .rules import alert_rule_create, alert_rule_delete, alert_rule_test, alert_rule_update

__all__ = [
    "FAN_OUT_BATCH",
    "FAN_OUT_GRACE",
    "MAX_ATTEMPTS",
    "RETRY_DELAYS",
    "alert_rule_create",
    "alert_rule_delete",
    "alert_rule_test",
    "alert_rule_update",
    "deliveries_attempt",
    "deliveries_dispatch",
    "deliveries_enqueue_on_commit",
    "deliveries_publish",
    "deliveries_publish_by_channel",
    "deliveries_sweep",
    "delivery_attempt",
    "delivery_claim",
    "delivery_resend",
    "dispatch_request",
    "event_dispatch_request",
    "events_fan_out",
    "events_fan_out_and_publish",
]
