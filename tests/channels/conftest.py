"""Channel test helpers: agents of each runtime in the shared tenancy."""

from __future__ import annotations

import pytest


@pytest.fixture
def openclaw_agent(tenancy):
    """A stopped OpenClaw agent shared into the tenancy's workspace."""
    return tenancy.agent(runtime_family="openclaw")


@pytest.fixture
def hermes_agent(tenancy):
    return tenancy.agent(runtime_family="hermes")


@pytest.fixture
def api_bases(settings, make_http_receiver):
    """Loopback fakes of the Telegram Bot API and the Slack API, named by the settings."""
    telegram, slack, discord = make_http_receiver(), make_http_receiver(), make_http_receiver()
    telegram.route("/botTOKEN-tg/sendMessage", {"ok": True, "result": {"message_id": 7}}, method="POST")
    slack.route("/chat.postMessage", {"ok": True, "ts": "1.2"}, method="POST")
    discord.route("/channels/555/messages", {"id": "99"}, method="POST")
    settings.TELEGRAM_API_BASE_URL = telegram.url
    settings.SLACK_API_BASE_URL = slack.url
    settings.DISCORD_API_BASE_URL = discord.url
    return {"telegram": telegram, "slack": slack, "discord": discord}
