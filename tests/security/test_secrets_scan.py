"""The secrets scan (tests/security/secrets_scan.py, which fails the run when the session ends on
anything logged or answered in clear): its watch is live, and a PostgreSQL dump and every admin
page of a database full of secrets hold none in clear (no password, raw API key, session JWT,
webhook secret or header value, or gateway token)."""

from __future__ import annotations

import subprocess

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.alerts import make_rule
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

from .secrets_scan import ALL_KINDS, REGISTRY

PASSWORD = "scan-password-8c1f"
WEBHOOK_SECRET = "whsec_" + "c2VjcmV0LXNpZ25pbmcta2V5LWJ5dGVzLTEyMzQ1Njc4"
HEADER_VALUE = "Bearer scan-header-token-5a1e"


def test_the_scan_itself_catches_a_logged_secret(caplog):
    """The watch is live: a secret written to a log line is a finding (taken back out here)."""
    import logging

    secret = "canary-5f3a9e-secret"
    REGISTRY.add("encrypted", secret)
    before = len(REGISTRY.findings)

    logging.getLogger("fleet.test").warning("leaking %s", secret)

    caught = REGISTRY.findings[before:]
    del REGISTRY.findings[before:]
    assert caught and "encrypted" in caught[0]


def test_the_scan_learns_the_secrets_fleet_makes(user_client, user):
    """A user's password (set by the factory) and the JWT of their session are known to it."""
    assert user_client.get("/api/auth/me").status_code == 200
    assert REGISTRY.secrets["password"] and REGISTRY.secrets["jwt"]


def _world():
    """Rows holding every kind of secret, made through the services and the API."""
    user = UserFactory(password=PASSWORD)
    workspace = WorkspaceFactory(owner=user)
    make_api_key(workspace=workspace, scopes=["agents:read"])
    login = Client().post("/api/auth/login", {"email": user.email, "password": PASSWORD},
                          content_type="application/json")
    assert login.status_code == 200
    make_rule(workspace=workspace, channels=[{"type": "webhook", "url": "http://127.0.0.1:9/hook",
                                              "secret": WEBHOOK_SECRET, "headers": {"Authorization": HEADER_VALUE}}])
    agent = AgentFactory(owner=user)
    WorkspaceAgentFactory(workspace=workspace, agent=agent)
    client_for(user).get("/api/agents")  # a request that records a key's or a session's use
    for kind, value in (("password", PASSWORD), ("encrypted", WEBHOOK_SECRET), ("encrypted", HEADER_VALUE)):
        REGISTRY.add(kind, value)
    return user, workspace, agent


def _dump() -> str:
    db = connection.settings_dict
    command = ["pg_dump", "--data-only", "--no-owner", "-h", db.get("HOST") or "127.0.0.1",
               "-p", str(db.get("PORT") or 5432), "-U", db.get("USER") or "postgres", db["NAME"]]
    env = {"PGPASSWORD": db.get("PASSWORD") or ""}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.django_db(transaction=True)
def test_the_database_dump_and_the_admin_pages_hold_no_secret(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    if connection.vendor != "postgresql":
        pytest.skip("the dump is PostgreSQL's")
    _world()

    dump = _dump()
    assert "INSERT INTO" in dump or "COPY " in dump
    in_dump = REGISTRY.find(dump, ALL_KINDS)
    assert not in_dump, f"secrets in clear in the database dump: {[(k, v[:4]) for k, v in in_dump]}"

    browser = Client()
    browser.force_login(AdminFactory())
    pages = ["/admin/"]
    for model in admin.site._registry:
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        try:
            pages.append(reverse(f"{prefix}_changelist"))
        except NoReverseMatch:
            continue
        for obj in model._default_manager.all()[:3]:
            pages.append(reverse(f"{prefix}_change", args=[obj.pk]))
    found = []
    for page in pages:
        response = browser.get(page)
        assert response.status_code == 200, page
        found += [(page, kind, value[:4]) for kind, value in REGISTRY.find(response.content.decode(), ALL_KINDS)]
    assert not found, f"secrets in clear on admin pages: {found}"
