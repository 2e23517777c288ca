"""Integrations from the console: connected and changed as the integration routes do (the
provider's config checked, credentials encrypted, never shown, "[REDACTED]" keeping them)."""

from __future__ import annotations

import json

import pytest

from integrations.models import Integration
from integrations.selectors import stored_config

pytestmark = pytest.mark.django_db

SECRET = "jira-console-secret-41d2"
INTEGRATIONS = "/admin/integrations/integration/"


def test_an_operator_connects_and_changes_an_integration_whose_secret_is_never_shown(console, tenancy,
                                                                                   platform_admin):
    agent = tenancy.agent()
    config = {"domain": "acme.atlassian.net", "email": "a@acme.test", "api_token": SECRET}

    added = console.post(f"{INTEGRATIONS}add/", {"agent": agent.pk, "provider": "jira", "config": json.dumps(config)})

    assert added.status_code == 302, added.content.decode()[-3000:]
    integration = Integration.objects.get(agent=agent)
    assert (integration.provider, integration.status, integration.created_by_id) == ("jira", "active",
                                                                                    platform_admin.pk)
    page = console.get(f"{INTEGRATIONS}{integration.pk}/change/").content.decode()
    assert SECRET not in page and "[REDACTED]" in page

    changed = console.post(f"{INTEGRATIONS}{integration.pk}/change/",
                           {"config": json.dumps({**config, "api_token": "[REDACTED]", "email": "b@acme.test"})})

    assert changed.status_code == 302, changed.content.decode()[-3000:]
    split = stored_config(Integration.objects.get(pk=integration.pk))
    assert (split.plain["email"], split.secret["api_token"]) == ("b@acme.test", SECRET)

    console.post(f"{INTEGRATIONS}{integration.pk}/delete/", {"post": "yes"})
    assert not Integration.objects.exists()


def test_the_providers_checks_refuse_on_the_form(console, tenancy):
    agent = tenancy.agent()

    unknown = console.post(f"{INTEGRATIONS}add/", {"agent": agent.pk, "provider": "nope", "config": "{}"})
    missing = console.post(f"{INTEGRATIONS}add/", {"agent": agent.pk, "provider": "jira",
                                                   "config": json.dumps({"domain": "acme.atlassian.net"})})

    assert unknown.status_code == 200 and missing.status_code == 200
    assert 'id="id_provider_error"><li>' in unknown.content.decode()
    assert 'id="id_config_error"><li>email: This field is required.</li><li>api_token: This field is required.' \
        in missing.content.decode()
    assert not Integration.objects.exists()
