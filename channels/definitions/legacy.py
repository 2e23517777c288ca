"""Fleet's own channel adapters for Hermes agents (channels.adapters). `receives`: the type takes
inbound messages at /api/webhooks/<id>; the others only send."""

from __future__ import annotations

from .base import ConfigField, Definition

LEGACY_TYPES: tuple[Definition, ...] = (
    Definition(
        "webhook", "Webhook", "Generic HTTP: JSON in at the inbound URL, replies POSTed to your URL.",
        (ConfigField("url", "Reply URL", "url", required=True, help="Replies and test messages are POSTed here."),
         ConfigField("secret", "Signing secret", "password", secret=True,
                     help="Standard Webhooks secret: inbound requests must be signed with it, replies are."),
         ),
        receives=True,
    ),
    Definition(
        "telegram", "Telegram", "A Telegram bot (Bot API): set its webhook to the inbound URL.",
        (ConfigField("botToken", "Bot token", "password", required=True, secret=True),
         ConfigField("webhookSecret", "Webhook secret token", "password", secret=True,
                     help="Checked against X-Telegram-Bot-Api-Secret-Token."),
         ConfigField("defaultChatId", "Chat for test messages"),
         ),
        receives=True,
    ),
    Definition(
        "slack", "Slack", "A Slack app: Events API requests at the inbound URL, replies by chat.postMessage.",
        (ConfigField("botToken", "Bot token (xoxb-)", "password", required=True, secret=True),
         ConfigField("signingSecret", "Signing secret", "password", secret=True,
                     help="Verifies X-Slack-Signature on inbound requests."),
         ConfigField("defaultChannel", "Channel for test messages"),
         ),
        receives=True,
    ),
    Definition(
        "discord", "Discord", "Messages sent to a Discord channel by a bot (outbound only).",
        (ConfigField("botToken", "Bot token", "password", required=True, secret=True),
         ConfigField("channelId", "Channel ID", required=True),
         ),
    ),
    Definition(
        "email", "Email", "Messages sent by email through Fleet's SMTP settings (outbound only).",
        (ConfigField("to", "Recipients", "list", required=True),
         ConfigField("subjectPrefix", "Subject prefix", default="[Fleet]"),
         ),
    ),
)
