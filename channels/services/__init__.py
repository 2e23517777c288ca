"""Every write of the channels app: runtime-managed (OpenClaw) channels, legacy channels, and
inbound messages."""

from .inbound import (
    inbound_forward,
    pending_inbound_requeue,
    receiving_channel,
    reply_send,
    stale_inbound_requeue,
    webhook_receive,
)
from .legacy import (
    legacy_channel_create,
    legacy_channel_delete,
    legacy_channel_send,
    legacy_channel_test,
    legacy_channel_test_recipients,
    legacy_channel_update,
)
from .runtime import (
    runtime_channel_login,
    runtime_channel_login_wait,
    runtime_channel_logout,
    runtime_channel_save,
    runtime_channels_push,
    runtime_channels_reapply,
)

__all__ = [
    "inbound_forward",
    "legacy_channel_create",
    "legacy_channel_delete",
    "legacy_channel_send",
    "legacy_channel_test",
    "legacy_channel_test_recipients",
    "legacy_channel_update",
    "pending_inbound_requeue",
    "receiving_channel",
    "reply_send",
    "runtime_channel_login",
    "runtime_channel_login_wait",
    "runtime_channel_logout",
    "runtime_channel_save",
    "runtime_channels_push",
    "runtime_channels_reapply",
    "stale_inbound_requeue",
    "webhook_receive",
]
