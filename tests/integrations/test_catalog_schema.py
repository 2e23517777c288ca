"""Every catalog entry against the schema docs/api.md "Integrations" names."""

from __future__ import annotations

import re

import pytest

from integrations import catalog

ENTRIES = catalog.providers()
FIELD_KEYS = {"key", "label", "type", "required", "secret", "env", "default", "options", "managed", "help"}
ENTRY_KEYS = {"id", "name", "category", "description", "authType", "configFields", "credentialsUrl", "setupGuide",
              "mcp", "test", "oauth"}
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")
TEST_KEYS = {"base", "method", "path", "headers", "basic", "json", "failWhen", "failWhenKey", "errorKey"}


def test_the_catalog_has_at_least_60_providers_in_every_category():
    assert len(ENTRIES) >= 60
    assert {e["category"] for e in ENTRIES} == set(catalog.CATEGORIES)
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_an_entry_has_every_field_design_names(entry):
    assert set(entry) <= ENTRY_KEYS
    assert ENTRY_KEYS - {"oauth"} <= set(entry)
    assert re.match(r"^[a-z0-9-]+$", entry["id"])
    assert entry["name"] and entry["description"] and entry["setupGuide"]
    assert entry["category"] in catalog.CATEGORIES
    assert entry["authType"] in catalog.AUTH_TYPES
    assert entry["credentialsUrl"].startswith("https://")
    keys = [f["key"] for f in entry["configFields"]]
    assert keys and len(keys) == len(set(keys))
    for field in entry["configFields"]:
        assert set(field) <= FIELD_KEYS and {"key", "label", "type", "required", "secret", "env"} <= set(field)
        assert field["type"] in catalog.FIELD_TYPES
        assert isinstance(field["required"], bool) and isinstance(field["secret"], bool)
        assert field["env"] is None or ENV_NAME.match(field["env"])
        if field["type"] == "password":
            assert field["secret"], "a password field is always secret"
        if field["type"] == "select":
            assert field["options"] and field.get("default", field["options"][0]) in field["options"]
    placeholders_refer_to_fields(entry, keys)


def placeholders_refer_to_fields(entry, keys):
    test = entry["test"]
    if test is not None:
        assert set(test) <= TEST_KEYS and {"base", "method", "path"} <= set(test)
        assert test["method"] in ("GET", "POST")
        texts = [test["base"], test["path"], *(test.get("headers") or {}).values(), *(test.get("basic") or [])]
        for text in texts:
            assert set(PLACEHOLDER.findall(text)) <= set(keys), text
    mcp = entry["mcp"]
    if mcp is not None:
        assert mcp["transport"] == "stdio" and mcp["command"] and isinstance(mcp["args"], list)
        for name, source in mcp["env"].items():
            assert ENV_NAME.match(name)
            assert source in keys or set(PLACEHOLDER.findall(source)) <= set(keys)
        for arg in mcp["args"]:
            assert set(PLACEHOLDER.findall(arg)) <= set(keys)


def test_twitter_and_linkedin_are_oauth2_with_their_endpoints_and_lifetimes():
    x, linkedin = catalog.provider("twitter"), catalog.provider("linkedin")
    assert x["authType"] == linkedin["authType"] == "oauth2"
    assert [e["id"] for e in ENTRIES if e["authType"] == "oauth2"] == ["twitter", "linkedin"]
    assert x["oauth"]["pkce"] is True and x["oauth"]["tokenLifetimeSeconds"] == 3600
    assert linkedin["oauth"]["pkce"] is False and linkedin["oauth"]["tokenLifetimeSeconds"] == 60 * 86400
    for entry in (x, linkedin):
        fields = {f["key"]: f for f in entry["configFields"]}
        # The client secret and the refresh token never reach a runtime; the access token does.
        assert fields["client_secret"]["env"] is None and fields["refresh_token"]["env"] is None
        assert fields["access_token"]["env"] and fields["access_token"]["managed"] == "oauth"


def test_gitlab_notion_stripe_and_supabase_can_run_as_stdio_mcp_servers():
    assert sorted(e["id"] for e in ENTRIES if e["mcp"]) == sorted(catalog.MCP_PROVIDERS)


def test_the_fifteen_named_providers_have_a_real_connection_test():
    named = ["github", "gitlab", "slack", "notion", "stripe", "linear", "jira", "openai", "anthropic", "sentry",
             "datadog", "pagerduty", "supabase", "twilio", "sendgrid"]
    assert all(catalog.provider(name)["test"] for name in named)


def test_oauth_entries_alone_carry_an_oauth_block():
    for entry in ENTRIES:
        assert ("oauth" in entry) == (entry["authType"] == "oauth2")
