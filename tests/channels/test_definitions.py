"""The channel type definitions and GET /agents/:id/channels/types/:type."""

from __future__ import annotations

import pytest

from channels.definitions import FIELD_TYPES, LEGACY_TYPES, OPENCLAW_TYPES, ConfigField, definition_for

pytestmark = pytest.mark.django_db

REQUIRED_OPENCLAW = {"whatsapp", "telegram", "slack", "discord", "feishu", "zalouser", "qqbot", "signal", "matrix",
                     "mattermost", "msteams", "googlechat", "line", "irc"}


def test_every_openclaw_type_the_design_names_is_defined():
    assert {d.type for d in OPENCLAW_TYPES} >= REQUIRED_OPENCLAW
    assert {d.type for d in LEGACY_TYPES} == {"webhook", "telegram", "slack", "discord", "email"}


def test_each_definition_is_whole_and_secrets_are_passwords_or_json():
    for definition in (*OPENCLAW_TYPES, *LEGACY_TYPES):
        assert definition.label and definition.description
        keys = [f.key for f in definition.config_fields]
        assert len(keys) == len(set(keys)), definition.type
        for field in definition.config_fields:
            assert field.type in FIELD_TYPES
            if field.secret:
                assert field.type in ("password", "json"), (definition.type, field.key)
            for other in (field.required_when or {}):
                assert other in keys


def test_login_kinds_and_logout_follow_the_contract():
    kinds = {d.type: d.login for d in OPENCLAW_TYPES}
    assert kinds["whatsapp"] == "qr"
    assert kinds["feishu"] == kinds["zalouser"] == "cli"
    assert {d.type for d in OPENCLAW_TYPES if d.can_logout} == {"whatsapp", "telegram", "qqbot"}


def test_a_select_field_without_options_is_refused():
    with pytest.raises(ValueError):
        ConfigField("x", "X", "select")


def test_the_type_route_serves_the_openclaw_definition(tenancy, openclaw_agent):
    response = tenancy.client("viewer").get(f"/api/agents/{openclaw_agent.id}/channels/types/telegram")

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["runtime"], body["type"], body["login"], body["canLogout"]) == ("openclaw", "telegram", "none", True)
    token = next(f for f in body["configFields"] if f["key"] == "botToken")
    assert token["secret"] is True and token["required"] is True and token["type"] == "password"
    assert body["plugin"] == {"package": "@openclaw/telegram", "bundled": True}
    assert body["available"] is True


def test_a_plugin_the_image_lacks_is_shown_unavailable(tenancy, openclaw_agent):
    body = tenancy.client("viewer").get(f"/api/agents/{openclaw_agent.id}/channels/types/slack").json()

    assert body["available"] is False
    slack = {f["key"]: f for f in body["configFields"]}
    assert slack["appToken"]["requiredWhen"] == {"mode": "socket"}


def test_the_type_route_serves_legacy_definitions_for_hermes(tenancy, hermes_agent):
    body = tenancy.client("viewer").get(f"/api/agents/{hermes_agent.id}/channels/types/webhook").json()

    assert (body["runtime"], body["receives"]) == ("legacy", True)
    assert definition_for("legacy", "email").receives is False


@pytest.mark.parametrize("type_", ["nope", "whatsapp"])
def test_an_unknown_type_is_404(tenancy, hermes_agent, type_):
    response = tenancy.client("viewer").get(f"/api/agents/{hermes_agent.id}/channels/types/{type_}")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")
