"""An OpenClaw agent's channels from the console: saved as the channel routes save them (checked
against the type, the token encrypted and never shown, "[REDACTED]" keeping it), never deleted."""

from __future__ import annotations

import json

import pytest

from channels.models import RuntimeChannel

pytestmark = pytest.mark.django_db

TOKEN = "123456:AAConsoleTokenNeverShown_0123456789"
CHANNELS = "/admin/channels/runtimechannel/"


def test_an_operator_saves_a_channel_whose_token_is_never_shown_and_kept_by_redacted(console, openclaw_agent):
    added = console.post(f"{CHANNELS}add/", {"agent": openclaw_agent.pk, "type": "telegram", "enabled": "on",
                                             "config": json.dumps({"botToken": TOKEN, "dmPolicy": "pairing"})})

    assert added.status_code == 302, added.content.decode()[-3000:]
    channel = RuntimeChannel.objects.get(agent=openclaw_agent)
    assert (channel.type, channel.enabled, channel.secret_values, channel.applied_at) == (
        "telegram", True, {"botToken": TOKEN}, None)  # stopped: stored, pushed at its next start
    page = console.get(f"{CHANNELS}{channel.pk}/change/").content.decode()
    assert TOKEN not in page and "[REDACTED]" in page

    changed = console.post(f"{CHANNELS}{channel.pk}/change/",
                           {"config": json.dumps({"botToken": "[REDACTED]", "dmPolicy": "open", "allowFrom": ["*"]})})

    assert changed.status_code == 302, changed.content.decode()[-3000:]
    channel.refresh_from_db()
    assert (channel.config["dmPolicy"], channel.secret_values, channel.enabled) == ("open", {"botToken": TOKEN}, False)
    assert console.post(f"{CHANNELS}{channel.pk}/delete/", {"post": "yes"}).status_code == 403


def test_the_types_checks_refuse_on_the_config_field(console, openclaw_agent, hermes_agent):
    missing = console.post(f"{CHANNELS}add/", {"agent": openclaw_agent.pk, "type": "telegram", "config": "{}"})
    unknown = console.post(f"{CHANNELS}add/", {"agent": openclaw_agent.pk, "type": "pigeon", "config": "{}"})
    hermes = console.post(f"{CHANNELS}add/", {"agent": hermes_agent.pk, "type": "telegram",
                                              "config": json.dumps({"botToken": TOKEN})})

    assert 'id="id_config_error"><li>botToken: This field is required.' in missing.content.decode()
    assert "Unknown channel type &#x27;pigeon&#x27; for openclaw channels." in unknown.content.decode()
    assert "channels are legacy channels" in hermes.content.decode()
    assert not RuntimeChannel.objects.exists()
