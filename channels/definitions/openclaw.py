"""OpenClaw's channel types. A field's `key` is the key of OpenClaw's `channels.<type>` config
block, so a saved config is pushed as it is (RUNTIMES.md "Channels"). Only telegram's plugin is
bundled with OpenClaw; the others are npm packages an image may carry (the Fleet image carries
WhatsApp's, see OPENCLAW_CHANNEL_PLUGIN_PATHS)."""

from __future__ import annotations

from .base import ConfigField, Definition, Plugin

LOGOUT_TYPES = ("whatsapp", "telegram", "qqbot")  # the contract: logout exists only for these

DM_POLICIES = ("pairing", "allowlist", "open", "disabled")
GROUP_POLICIES = ("open", "allowlist", "disabled")


def _dm_policy() -> ConfigField:
    return ConfigField("dmPolicy", "Direct messages", "select", default="pairing", options=DM_POLICIES,
                       help="pairing: unknown senders get a pairing code an operator approves.")


def _allow_from() -> ConfigField:
    return ConfigField("allowFrom", "Allowed senders", "list", help="Sender ids allowed by the allowlist policy.")


def _group_policy() -> ConfigField:
    return ConfigField("groupPolicy", "Groups", "select", options=GROUP_POLICIES)


def _official(name: str) -> Plugin:
    return Plugin(package=f"@openclaw/{name}")


OPENCLAW_TYPES: tuple[Definition, ...] = (
    Definition(
        "whatsapp", "WhatsApp", "WhatsApp Web, linked by scanning a QR code with the phone.",
        (_dm_policy(), _allow_from(), _group_policy()),
        login="qr", can_logout=True, plugin=_official("whatsapp"),
    ),
    Definition(
        "telegram", "Telegram", "A Telegram bot (Bot API token from @BotFather).",
        (ConfigField("botToken", "Bot token", "password", required=True, secret=True),
         _dm_policy(), _allow_from(), _group_policy()),
        can_logout=True, plugin=Plugin(package="@openclaw/telegram", bundled=True),
    ),
    Definition(
        "slack", "Slack", "A Slack app, over Socket Mode or the Events API.",
        (ConfigField("mode", "Mode", "select", default="socket", options=("socket", "http")),
         ConfigField("botToken", "Bot token (xoxb-)", "password", required=True, secret=True),
         ConfigField("appToken", "App token (xapp-)", "password", required_when={"mode": "socket"}, secret=True),
         ConfigField("signingSecret", "Signing secret", "password", required_when={"mode": "http"}, secret=True),
         _dm_policy(), _allow_from()),
        plugin=_official("slack"),
    ),
    Definition(
        "discord", "Discord", "A Discord bot.",
        (ConfigField("token", "Bot token", "password", required=True, secret=True), _dm_policy(), _allow_from(),
         _group_policy()),
        plugin=_official("discord"),
    ),
    Definition(
        "feishu", "Feishu / Lark", "A Feishu or Lark app; paired with the runtime's CLI login.",
        (ConfigField("appId", "App ID", required=True),
         ConfigField("appSecret", "App secret", "password", required=True, secret=True),
         ConfigField("domain", "Domain", "select", default="feishu", options=("feishu", "lark")), _dm_policy()),
        login="cli", plugin=_official("feishu"),
    ),
    Definition(
        "zalouser", "Zalo Personal Account", "A personal Zalo account, paired with the runtime's CLI login.",
        (_dm_policy(), _allow_from()),
        login="cli", plugin=_official("zalouser"),
    ),
    Definition(
        "qqbot", "QQ Bot", "A QQ bot of the QQ open platform.",
        (ConfigField("appId", "App ID", required=True),
         ConfigField("clientSecret", "Client secret", "password", required=True, secret=True), _dm_policy()),
        can_logout=True, plugin=Plugin(package="@tencent-connect/openclaw-qqbot"),
    ),
    Definition(
        "signal", "Signal", "Signal through a signal-cli REST daemon.",
        (ConfigField("account", "Phone number", required=True, help="E.164, e.g. +15551234567"),
         ConfigField("httpUrl", "signal-cli URL", "url"), _dm_policy(), _allow_from()),
        plugin=_official("signal"),
    ),
    Definition(
        "matrix", "Matrix", "A Matrix account on any homeserver.",
        (ConfigField("homeserver", "Homeserver URL", "url", required=True),
         ConfigField("userId", "User ID", required=True),
         ConfigField("accessToken", "Access token", "password", required=True, secret=True), _dm_policy()),
        plugin=_official("matrix"),
    ),
    Definition(
        "mattermost", "Mattermost", "A Mattermost bot account.",
        (ConfigField("baseUrl", "Server URL", "url", required=True),
         ConfigField("botToken", "Bot token", "password", required=True, secret=True), _dm_policy()),
        plugin=_official("mattermost"),
    ),
    Definition(
        "msteams", "Microsoft Teams", "A Microsoft Teams bot (Azure Bot registration).",
        (ConfigField("appId", "App ID", required=True),
         ConfigField("appPassword", "App password", "password", required=True, secret=True),
         ConfigField("tenantId", "Tenant ID"), _dm_policy()),
        plugin=_official("msteams"),
    ),
    Definition(
        "googlechat", "Google Chat", "A Google Chat app with a service account.",
        (ConfigField("serviceAccount", "Service account JSON", "json", required=True, secret=True),
         ConfigField("audienceType", "Audience type", "select", default="app-url",
                     options=("app-url", "project-number")),
         ConfigField("audience", "Audience"), _dm_policy()),
        plugin=_official("googlechat"),
    ),
    Definition(
        "line", "LINE", "A LINE Messaging API channel.",
        (ConfigField("channelAccessToken", "Channel access token", "password", required=True, secret=True),
         ConfigField("channelSecret", "Channel secret", "password", required=True, secret=True), _dm_policy()),
        plugin=_official("line"),
    ),
    Definition(
        "irc", "IRC", "An IRC network connection.",
        (ConfigField("host", "Server", required=True),
         ConfigField("port", "Port", "integer", default=6697),
         ConfigField("tls", "TLS", "boolean", default=True),
         ConfigField("nick", "Nickname", required=True),
         ConfigField("channels", "Channels to join", "list"),
         ConfigField("password", "Server password", "password", secret=True), _dm_policy()),
        plugin=_official("irc"),
    ),
)
