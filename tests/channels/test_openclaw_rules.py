"""Runtime-managed channels without a runtime: stored state, validation and the 4xx rules."""

from __future__ import annotations

import pytest
from django.db import connection

from channels.models import RuntimeChannel

pytestmark = pytest.mark.django_db

TOKEN = "123456:SECRET-bot-token-value"


def _url(agent, suffix=""):
    return f"/api/agents/{agent.id}/channels{suffix}"


def test_saving_on_a_stopped_agent_stores_it_pending_and_the_catalog_shows_it(tenancy, openclaw_agent):
    editor = tenancy.client("editor")

    response = editor.post(_url(openclaw_agent), {"type": "telegram", "config": {"botToken": TOKEN},
                                                  "enabled": True}, format="json")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["success"], body["restart"]) == (True, "pending")
    assert body["channel"]["id"] == "telegram" and body["channel"]["configured"] is True
    assert body["channel"]["live"] is False
    assert TOKEN not in response.content.decode()
    payload = editor.get(_url(openclaw_agent)).json()
    assert payload["runtime"] == "openclaw" and payload["live"] is False
    assert payload["capabilities"] == {"supportsTesting": False, "supportsMessageHistory": False,
                                       "supportsArbitraryNames": False, "supportsLazyTypeDefinitions": True}
    rows = {row["id"]: row for row in payload["channels"]}
    assert rows["telegram"]["configured"] and rows["telegram"]["enabled"]
    assert rows["whatsapp"]["actions"] == {"canQrLogin": True, "loginKind": "qr", "canDelete": False,
                                           "canLogout": True}
    assert rows["whatsapp"]["configured"] is False
    assert {"type": "telegram", "label": "Telegram"} in payload["availableTypes"]


def test_the_token_is_encrypted_at_rest(tenancy, openclaw_agent):
    tenancy.client("editor").post(_url(openclaw_agent), {"type": "telegram", "config": {"botToken": TOKEN}},
                                  format="json")
    with connection.cursor() as cursor:
        cursor.execute("SELECT config::text, secrets FROM channels_runtimechannel")
        public, secrets = cursor.fetchone()
    assert TOKEN not in public and TOKEN not in secrets and secrets.startswith("v1:")
    assert RuntimeChannel.objects.get().secret_values == {"botToken": TOKEN}


def test_redacted_sent_back_keeps_the_stored_token_and_patch_toggles(tenancy, openclaw_agent):
    editor = tenancy.client("editor")
    editor.post(_url(openclaw_agent), {"type": "telegram", "config": {"botToken": TOKEN}}, format="json")

    response = editor.patch(_url(openclaw_agent, "/telegram"),
                            {"config": {"botToken": "[REDACTED]", "dmPolicy": "open"}, "enabled": False},
                            format="json")

    assert response.status_code == 200, response.content
    assert response.json()["channel"]["enabled"] is False
    channel = RuntimeChannel.objects.get()
    assert channel.secret_values == {"botToken": TOKEN} and channel.config["dmPolicy"] == "open"


@pytest.mark.parametrize(("body", "field"), [
    ({"type": "telegram", "config": {}}, "config.botToken"),
    ({"type": "telegram", "config": {"botToken": TOKEN, "color": "red"}}, "config.color"),
    ({"type": "telegram", "config": {"botToken": 5}}, "config.botToken"),
    ({"type": "telegram", "config": {"botToken": TOKEN, "dmPolicy": "sometimes"}}, "config.dmPolicy"),
    ({"type": "telegram", "config": "nope"}, "config"),
    ({"type": "irc", "config": {"host": "irc.example", "nick": "bot", "port": "x"}}, "config.port"),
    ({"config": {}}, "type"),
])
def test_bad_config_is_a_400_naming_the_field(tenancy, openclaw_agent, body, field):
    response = tenancy.client("editor").post(_url(openclaw_agent), body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"]


def test_redacted_without_a_stored_secret_is_refused(tenancy, openclaw_agent):
    response = tenancy.client("editor").post(_url(openclaw_agent), {"type": "telegram",
                                                                    "config": {"botToken": "[REDACTED]"}},
                                             format="json")

    assert response.status_code == 400 and "config.botToken" in response.json()["fields"]


@pytest.mark.parametrize("type_", ["feishu", "zalouser"])
def test_the_images_cli_login_plugins_are_available(tenancy, openclaw_agent, type_):
    config = {"appId": "cli_a", "appSecret": "b"} if type_ == "feishu" else {}
    response = tenancy.client("editor").post(_url(openclaw_agent), {"type": type_, "config": config}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["restart"] == "pending"


def test_a_channel_whose_plugin_the_image_lacks_is_refused_clearly(tenancy, openclaw_agent):
    response = tenancy.client("editor").post(
        _url(openclaw_agent), {"type": "slack", "config": {"botToken": "xoxb-1", "appToken": "xapp-1"}}, format="json")

    assert response.status_code == 409
    assert response.json()["code"] == "plugin_unavailable"
    assert "@openclaw/slack" in response.json()["error"]
    assert not RuntimeChannel.objects.exists()


def test_an_unknown_type_is_404(tenancy, openclaw_agent):
    response = tenancy.client("editor").post(_url(openclaw_agent), {"type": "fax", "config": {}}, format="json")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")


@pytest.mark.parametrize(("suffix", "status", "code"), [
    ("/slack/logout", 400, "logout_not_supported"),
    ("/telegram/connect", 400, "no_login"),
    ("/feishu/login", 409, "unsupported"),
    ("/zalouser/connect", 409, "agent_not_running"),
    ("/zalouser/login/wait", 409, "agent_not_running"),
    ("/fax/connect", 404, "not_found"),
    ("/whatsapp/connect", 409, "agent_not_running"),
    ("/telegram/logout", 409, "agent_not_running"),
])
def test_login_and_logout_rules(tenancy, openclaw_agent, suffix, status, code):
    response = tenancy.client("editor").post(_url(openclaw_agent, suffix), {}, format="json")

    assert (response.status_code, response.json()["code"]) == (status, code), response.content


@pytest.mark.parametrize(("method", "suffix"), [
    ("post", "/telegram/test"), ("get", "/telegram/messages"), ("delete", "/telegram"),
    ("delete", "/00000000-0000-0000-0000-000000000000"),
])
def test_legacy_routes_on_an_openclaw_agent_are_409_runtime_managed(tenancy, openclaw_agent, method, suffix):
    response = getattr(tenancy.client("editor"), method)(_url(openclaw_agent, suffix))

    assert (response.status_code, response.json()["code"]) == (409, "runtime_managed")


@pytest.mark.parametrize("suffix", ["/whatsapp/connect", "/whatsapp/login", "/whatsapp/login/wait",
                                    "/telegram/logout"])
def test_openclaw_routes_on_a_hermes_agent_are_409_legacy_channel(tenancy, hermes_agent, suffix):
    response = tenancy.client("editor").post(_url(hermes_agent, suffix), {}, format="json")

    assert (response.status_code, response.json()["code"]) == (409, "legacy_channel")


def test_the_admin_lists_channels_without_their_secrets(tenancy, openclaw_agent, client):
    tenancy.client("editor").post(_url(openclaw_agent), {"type": "telegram", "config": {"botToken": TOKEN}},
                                  format="json")
    client.force_login(tenancy.platform_admin)
    channel = RuntimeChannel.objects.get()

    listing = client.get("/admin/channels/runtimechannel/")
    detail = client.get(f"/admin/channels/runtimechannel/{channel.pk}/change/")

    assert listing.status_code == detail.status_code == 200
    assert TOKEN not in detail.content.decode() and channel.secrets not in detail.content.decode()
