"""Every write of the alerts app. Import from here: `from alerts.services import alert_rule_create`."""

from .delivery import (
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    deliveries_sweep,
    delivery_attempt,
    delivery_claim,
    delivery_resend,
)
from .dispatch import deliveries_dispatch, dispatch_request
from .enqueue import deliveries_enqueue_on_commit, deliveries_publish
from .fanout import deliveries_create, event_fan_out
from .rules import alert_rule_create, alert_rule_delete, alert_rule_test, alert_rule_update

__all__ = [
    "MAX_ATTEMPTS",
    "RETRY_DELAYS",
    "alert_rule_create",
    "alert_rule_delete",
    "alert_rule_test",
    "alert_rule_update",
    "deliveries_create",
    "deliveries_dispatch",
    "deliveries_sweep",
    "delivery_attempt",
    "delivery_claim",
    "deliveries_enqueue_on_commit",
    "deliveries_publish",
    "delivery_resend",
    "dispatch_request",
    "event_fan_out",
]
