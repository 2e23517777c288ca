"""GET /api/agents from its version (agents.list_cache): ETag, 304, and no stale list after any
kind of write, with the per-caller body cache in use (committed transactions, as in production)."""

from __future__ import annotations

import gzip

import pytest

from accounts.models import User
from accounts.tokens import sessions_revoke
from agents import list_cache
from agents.api import agents as agents_api
from agents.models import Agent, WorkspaceAgent
from tests.factories.agents import AgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import Tenancy, client_for
from workspaces.models import Membership, Workspace
from workspaces.services import api_key_revoke, workspace_delete


@pytest.fixture
def built(monkeypatch):
    """How many times the body was built (not served from the cache)."""
    calls = []
    original = agents_api.agent_list

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(agents_api, "agent_list", counting)
    list_cache.forget_bodies()
    yield calls
    list_cache.forget_bodies()


def _rows(client) -> dict[str, dict]:
    response = client.get("/api/agents")
    assert response.status_code == 200, response.content[:200]
    return {row["id"]: row for row in response.json()}


@pytest.mark.django_db(transaction=True)
def test_no_stale_list_after_any_kind_of_write(built):
    """Each step: the list is served from the cache (the second of two answers is not built),
    then one kind of write, then the next answer shows it."""
    t = Tenancy.create()
    editor = client_for(t.editor)
    shared = t.agent(name="shared")

    def cached_then(write, check) -> None:
        _rows(editor)
        before = len(built)
        _rows(editor)
        assert len(built) == before, "the second answer should come from the cache"
        write()
        check(_rows(editor))

    own = AgentFactory(owner=t.editor, name="own", status="stopped", container_id="")
    cached_then(lambda: AgentFactory(owner=t.editor, name="new"),
                lambda rows: {"own", "new", "shared"} <= {r["name"] for r in rows.values()})
    cached_then(lambda: Agent.objects.filter(pk=own.pk).update(status="running"),  # no signals: a bulk update
                lambda rows: rows[str(own.pk)]["status"] == "running")
    cached_then(lambda: Agent.objects.filter(pk=own.pk).delete(), lambda rows: str(own.pk) not in rows)

    outside = AgentFactory(owner=t.outsider, name="outside", status="stopped", container_id="")
    cached_then(lambda: WorkspaceAgent.objects.create(workspace=t.workspace, agent=outside, role="pager"),
                lambda rows: rows[str(outside.pk)]["workspaces"][0]["role"] == "pager")
    cached_then(lambda: WorkspaceAgent.objects.filter(agent=outside).update(role="oncall"),
                lambda rows: rows[str(outside.pk)]["workspaces"][0]["role"] == "oncall")
    cached_then(lambda: WorkspaceAgent.objects.filter(agent=outside).delete(), lambda rows: str(outside.pk) not in rows)

    cached_then(lambda: Workspace.objects.filter(pk=t.workspace.pk).update(name="Renamed"),
                lambda rows: rows[str(shared.pk)]["workspaces"][0]["name"] == "Renamed")
    membership = Membership.objects.get(workspace=t.workspace, user=t.editor)
    cached_then(lambda: Membership.objects.filter(pk=membership.pk).update(role="admin"),
                lambda rows: rows[str(shared.pk)]["effectiveRole"] == "admin")
    cached_then(lambda: Membership.objects.filter(pk=membership.pk).delete(), lambda rows: str(shared.pk) not in rows)

    other = WorkspaceFactory(owner=t.outsider)
    Membership.objects.create(workspace=other, user=t.editor, role="viewer")
    WorkspaceAgent.objects.create(workspace=other, agent=outside)
    cached_then(lambda: workspace_delete(workspace=other), lambda rows: str(outside.pk) not in rows)

    def promote() -> None:  # as the admin console does: a saved user (accounts.user_cache follows saves)
        t.editor.role = User.Role.ADMIN
        t.editor.save()

    cached_then(promote, lambda rows: rows[str(outside.pk)]["effectiveRole"] == "admin")  # a platform admin sees all


@pytest.mark.django_db(transaction=True)
def test_revocation_deactivation_and_key_revocation_end_cached_lists(built):
    t = Tenancy.create()
    t.agent()
    key, secret = make_api_key(workspace=t.workspace, scopes=("agents:read",))

    def deactivate(user) -> None:
        user.is_active = False
        user.save()

    for client, end in (
        (client_for(t.editor), lambda: sessions_revoke(user=t.editor)),
        (client_for(t.viewer), lambda: deactivate(t.viewer)),
        (client_for(api_key=secret), lambda: api_key_revoke(api_key=key)),
    ):
        _rows(client)
        _rows(client)
        end()
        assert client.get("/api/agents").status_code == 401


@pytest.mark.django_db
def test_every_answer_carries_an_etag_and_the_current_one_gets_304(tenancy):
    tenancy.agent()
    client = client_for(tenancy.editor)
    first = client.get("/api/agents")
    etag = first["ETag"]

    assert etag.startswith('"') and first.status_code == 200
    not_modified = client.get("/api/agents", HTTP_IF_NONE_MATCH=etag)
    assert not_modified.status_code == 304
    assert not_modified.content == b""
    assert not_modified["ETag"] == etag
    assert client.get("/api/agents", HTTP_IF_NONE_MATCH=f'"other", W/{etag}').status_code == 304  # weak, in a list
    assert client.get("/api/agents?scope=owned", HTTP_IF_NONE_MATCH=etag).status_code == 200  # another answer
    assert client_for(tenancy.viewer).get("/api/agents", HTTP_IF_NONE_MATCH=etag).status_code == 200  # another caller

    tenancy.agent()
    changed = client.get("/api/agents", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    assert len(changed.json()) == 2


@pytest.mark.django_db
def test_a_gzipped_answer_carries_the_weak_etag_that_gets_304(tenancy):
    for _ in range(3):
        tenancy.agent()
    client = client_for(tenancy.editor)
    gzipped = client.get("/api/agents", HTTP_ACCEPT_ENCODING="gzip")

    assert gzipped["Content-Encoding"] == "gzip"
    assert gzipped["Vary"] == "Accept-Encoding"
    assert gzip.decompress(gzipped.content) == client.get("/api/agents").content
    assert gzipped["ETag"].startswith('W/"')
    assert client.get("/api/agents", HTTP_IF_NONE_MATCH=gzipped["ETag"]).status_code == 304


@pytest.mark.django_db(transaction=True)
def test_a_cached_body_is_compressed_once_and_named_at_random_per_answer(built, monkeypatch):
    t = Tenancy.create()
    for _ in range(3):
        t.agent()
    client = client_for(t.editor)
    compressions = []
    monkeypatch.setattr(list_cache, "compress", lambda body: compressions.append(1) or gzip.compress(body, mtime=0))

    answers = [client.get("/api/agents", HTTP_ACCEPT_ENCODING="gzip").content for _ in range(12)]

    assert len(built) == 1 and len(compressions) == 1
    assert {gzip.decompress(answer) for answer in answers} == {client.get("/api/agents").content}
    assert len({len(answer) for answer in answers}) > 1  # BREACH: the length varies
