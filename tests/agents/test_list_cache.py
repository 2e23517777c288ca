"""GET /api/agents from its version (agents.list_cache): ETag, 304, and no stale list after any
kind of write, with the per-caller body cache in use (committed transactions, as in production)."""

from __future__ import annotations

import gzip

import pytest
from django.db import connection
from rest_framework import serializers

from accounts.models import User
from accounts.tokens import sessions_revoke
from agents import list_cache, list_rows, selectors
from agents.api import agents as agents_api
from agents.api.serializers import AgentListItemOut, WorkspaceRefOut
from agents.models import Agent, Status, WorkspaceAgent
from agents.selectors import agent_list
from agents.services.assignment import workspace_agent_assign
from agents.services.engine_probe import engine_reason_prefix, engines_probe
from agents.services.provisioning import agent_provision_fail
from fleet.api.principal import Principal
from fleet.api.renderers import dumps
from tests.factories.agents import AgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import Tenancy, client_for, in_thread
from workspaces.keys import principal_from_api_key
from workspaces.models import Membership, Workspace
from workspaces.roles import Role
from workspaces.services import api_key_create, api_key_revoke, membership_add, workspace_delete


@pytest.fixture
def built(monkeypatch):
    """How many times the body was built (not served from the cache), from kept rows or whole."""
    calls = []
    original = agents_api.list_body

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(agents_api, "list_body", counting)
    list_cache.forget_bodies()
    list_rows.forget_rows()
    yield calls
    list_cache.forget_bodies()
    list_rows.forget_rows()


def _rows(client) -> dict[str, dict]:
    response = client.get("/api/agents")
    assert response.status_code == 200, response.content[:200]
    return {row["id"]: row for row in response.json()}


def _by_name(client) -> dict[str, dict]:
    return {row["name"]: row for row in _rows(client).values()}


def _served_from_cache(client, built) -> str:
    """The list's ETag once a second answer came from this process's cache and a conditional
    GET with it got 304, neither building the body."""
    first = client.get("/api/agents")
    assert first.status_code == 200, first.content[:200]
    before = len(built)
    again = client.get("/api/agents")
    assert again.content == first.content and again["ETag"] == first["ETag"]
    not_modified = client.get("/api/agents", HTTP_IF_NONE_MATCH=first["ETag"])
    assert not_modified.status_code == 304 and not_modified.content == b""
    assert len(built) == before, "the second answer and the 304 should not build the body"
    return first["ETag"]


@pytest.mark.django_db(transaction=True)
def test_no_stale_list_after_any_kind_of_write(built):
    """Each step: the list is served from the cache (the second of two answers is not built),
    then one kind of write, then the next answer shows it."""
    t = Tenancy.create()
    editor = client_for(t.editor)
    shared = t.agent(name="shared")

    def cached_then(write, check) -> None:
        etag = _served_from_cache(editor, built)
        write()
        changed = editor.get("/api/agents", HTTP_IF_NONE_MATCH=etag)
        assert changed.status_code == 200, "a client's copy from before the write must not get 304"
        check({row["id"]: row for row in changed.json()})

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



@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("caller", ["session", "key"])
def test_no_stale_list_for_a_session_or_a_workspace_key_after_each_kind_of_write(
    built, caller, settings, dead_socket
):
    """The editor's session and a workspace key the editor issued (agents:read and write).
    Before each write the list is cached and a conditional GET gets 304 without building it;
    after it, the old ETag gets 200 and the body is the one built from the database now."""
    t = Tenancy.create()
    key, secret = make_api_key(workspace=t.workspace, created_by=t.editor, scopes=("agents:read", "agents:write"))
    client = client_for(t.editor) if caller == "session" else client_for(api_key=secret)
    by_key = caller == "key"
    shared = t.agent(name="shared")
    errored = t.agent(name="errored", status=Status.ERROR, last_error="The image could not be pulled.")
    deploying = t.agent(name="deploying", status=Status.DEPLOYING)
    t.agent(name="running", status=Status.RUNNING, container_id="c" * 64)
    own = AgentFactory(owner=t.editor, name="own", status=Status.STOPPED, container_id="")  # in no workspace
    t.agent(t.outsider, workspace=t.other_workspace, name="elsewhere")

    def principal() -> Principal:
        if by_key:
            return principal_from_api_key(secret)
        return Principal(user=User.objects.get(pk=t.editor.pk))

    def after(write, check) -> None:
        etag = _served_from_cache(client, built)
        write()
        answer = client.get("/api/agents", HTTP_IF_NONE_MATCH=etag)
        assert answer.status_code == 200, "a client's copy from before the write must not get 304"
        assert answer["ETag"] != etag
        rows = answer.json()
        assert rows == [dict(row) for row in agent_list(principal())], "the body is the list as it is now"
        check({row["name"]: row for row in rows})

    def names(*wanted):
        return lambda rows: set(rows) == set(wanted)

    visible = {"shared", "errored", "deploying", "running"} | (set() if by_key else {"own"})
    assert set(_by_name(client)) == visible

    # A membership added: the session now sees the other workspace's agent; the key does not.
    after(lambda: membership_add(workspace=t.other_workspace, acting_role=Role.OWNER, email=t.editor.email,
                                 role=Role.VIEWER),
          names(*visible) if by_key else names(*visible, "elsewhere"))
    visible = visible if by_key else visible | {"elsewhere"}

    # A key created, then revoked (another key than the caller's): the list stays what it is.
    other_key, _ = api_key_create(workspace=t.workspace, created_by=t.owner, name="ci", scopes=["agents:read"])
    after(lambda: api_key_revoke(api_key=other_key), names(*visible))
    after(lambda: api_key_create(workspace=t.workspace, created_by=t.owner, name="deploys", scopes=["agents:read"]),
          names(*visible))

    # The editor's own agent assigned into the key's workspace (the service), then relabelled
    # through the API: the key now sees it; the session sees its workspaces[] change.
    after(lambda: workspace_agent_assign(workspace=t.workspace, principal=Principal(user=t.editor), agent_id=own.pk),
          lambda rows: rows["own"]["workspaces"] == [{"id": str(t.workspace.pk), "name": t.workspace.name,
                                                      "role": "member"}])
    visible |= {"own"}

    def relabel_through_the_api() -> None:
        response = client_for(t.editor).post(f"/api/workspaces/{t.workspace.pk}/agents",
                                             {"agentId": str(own.pk), "role": "pager"}, format="json")
        assert response.status_code == 200, response.content

    after(relabel_through_the_api, lambda rows: rows["own"]["workspaces"][0]["role"] == "pager")

    # A membership's role changed through the API (PATCH): the session's role on shared agents.
    def promote_editor() -> None:
        response = client_for(t.owner).patch(f"/api/workspaces/{t.workspace.pk}/members/{t.editor.pk}",
                                             {"role": "admin"}, format="json")
        assert response.status_code == 200, response.content

    after(promote_editor, lambda rows: rows["shared"]["effectiveRole"] == ("editor" if by_key else "admin"))

    # Agents' status through the API (stop), a service (a deploy failing) and the engine probe.
    def stop_through_the_api() -> None:
        response = client_for(t.agent_owner).post(f"/api/agents/{errored.pk}/stop")
        assert response.status_code == 200, response.content

    after(stop_through_the_api,
          lambda rows: (rows["errored"]["status"], rows["errored"]["last_error"]) == ("stopped", ""))
    after(lambda: agent_provision_fail(agent_id=deploying.pk, reason="The container engine refused the workload."),
          lambda rows: (rows["deploying"]["status"], rows["deploying"]["last_error"])
          == ("error", "The container engine refused the workload."))

    def engine_unreachable() -> None:
        settings.DOCKER_HOST = dead_socket
        assert engines_probe()["docker"] == "unreachable"

    after(engine_unreachable, lambda rows: rows["running"]["status"] == "warning"
          and rows["running"]["last_error"].startswith(engine_reason_prefix("docker")))

    # Raw SQL, the API's DELETE, and a TRUNCATE: no ORM, no signal, no service.
    def raw_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE agents_agent SET name = %s WHERE id = %s", ["renamed", shared.pk])

    after(raw_update, names(*(visible - {"shared"}), "renamed"))
    visible = visible - {"shared"} | {"renamed"}

    def delete_through_the_api() -> None:
        assert client_for(t.editor).delete(f"/api/agents/{own.pk}").status_code == 200

    after(delete_through_the_api, names(*(visible - {"own"})))
    visible -= {"own"}

    def truncate() -> None:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE agents_workspaceagent")

    # Without assignments the key sees nothing; the session sees only its own agents (none left).
    after(truncate, names())

    # The caller's own credential revoked: 401, never a list from the cache.
    _served_from_cache(client, built)
    if by_key:
        api_key_revoke(api_key=key)
    else:
        sessions_revoke(user=t.editor)
    assert client.get("/api/agents").status_code == 401


def test_the_list_format_follows_the_serializers_fields_and_list_format(monkeypatch):
    current = list_cache.list_format(AgentListItemOut)
    assert current == list_cache.list_format(AgentListItemOut) == agents_api.LIST_FORMAT

    class Added(AgentListItemOut):
        gateway_host_port = serializers.IntegerField(allow_null=True)

    class Retyped(AgentListItemOut):
        vcpu = serializers.CharField()

    class RenamedRef(WorkspaceRefOut):
        role = None
        label = serializers.CharField(allow_null=True)

    class NestedChanged(AgentListItemOut):
        workspaces = RenamedRef(many=True)

    formats = {list_cache.list_format(shape) for shape in (Added, Retyped, NestedChanged)}
    assert current not in formats and len(formats) == 3
    monkeypatch.setattr(list_cache, "LIST_FORMAT", list_cache.LIST_FORMAT + 1)
    assert list_cache.list_format(AgentListItemOut) != current


@pytest.mark.django_db(transaction=True)
def test_a_release_that_changes_the_list_format_never_answers_304_to_an_old_body(built, monkeypatch):
    t = Tenancy.create()
    t.agent()
    client = client_for(t.editor)
    etag = _served_from_cache(client, built)

    monkeypatch.setattr(list_cache, "LIST_FORMAT", list_cache.LIST_FORMAT + 1)  # the next release
    monkeypatch.setattr(agents_api, "LIST_FORMAT", list_cache.list_format(AgentListItemOut))
    answer = client.get("/api/agents", HTTP_IF_NONE_MATCH=etag)

    assert answer.status_code == 200 and answer["ETag"] != etag
    assert client.get("/api/agents", HTTP_IF_NONE_MATCH=answer["ETag"]).status_code == 304


# --- kept rows (agents.list_rows): the list after a write --------------------------------------


@pytest.fixture
def reads(monkeypatch, settings):
    """Each time rows were read for a list: the set of agent ids read again, or "whole". The
    whole-body cache is off, so every answer is put together by agents.list_rows."""
    settings.AGENT_LIST_CACHE_MB = 0
    seen: list = []
    original = list_rows.agent_list_rows

    def recording(principal, roles, *, scope="accessible", agent_ids=None, **kwargs):
        seen.append("whole" if agent_ids is None else set(agent_ids))
        return original(principal, roles, scope=scope, agent_ids=agent_ids, **kwargs)

    monkeypatch.setattr(list_rows, "agent_list_rows", recording)
    list_rows.forget_rows()
    yield seen
    list_rows.forget_rows()


def _whole_list(principal: Principal, scope: str = "accessible") -> bytes:
    return dumps(agent_list(principal, scope=scope))


def _session(user) -> Principal:
    return Principal(user=User.objects.get(pk=user.pk))


@pytest.mark.django_db(transaction=True)
def test_after_each_kind_of_write_only_the_rows_it_changed_are_read_again(reads, monkeypatch):
    """The editor's list, kept; then one write; the next answer is byte for byte the list built
    whole from the database now, and only the rows that write changed were read again (their
    assignments only when those moved)."""
    read_names: list[str] = []
    original_read = selectors._list_read
    monkeypatch.setattr(selectors, "_list_read",
                        lambda read, *args: read_names.append(read) or original_read(read, *args))
    t = Tenancy.create()
    client = client_for(t.editor)
    first, second, third = t.agent(name="first"), t.agent(name="second"), t.agent(name="third")
    own = AgentFactory(owner=t.editor, name="own", status=Status.STOPPED, container_id="")  # in no workspace
    spare = [AgentFactory(owner=t.editor, name=f"spare-{index}") for index in range(6)]  # never written
    ids = {name: str(agent.pk) for name, agent in
           {"first": first, "second": second, "third": third, "own": own}.items()}

    def after(write, read_again, assignments_read=True) -> dict[str, dict]:
        client.get("/api/agents")  # every row kept
        reads.clear()
        write()
        read_names.clear()
        answer = client.get("/api/agents")
        assert answer.status_code == 200
        assert answer.content == _whole_list(_session(t.editor)), "the body is the list as it is now"
        assert reads == ([] if read_again == set() else [read_again]), reads
        if read_again not in (set(), "whole"):
            assert read_names == ["revisions", "rows"] + (["assignments"] if assignments_read else []), read_names
        return {row["name"]: row for row in answer.json()}

    assert set(_by_name(client)) == {"first", "second", "third", "own"} | {agent.name for agent in spare}
    assert reads == ["whole"]  # a caller seen for the first time

    rows = after(lambda: Agent.objects.filter(pk=first.pk).update(status=Status.RUNNING), {ids["first"]},
                 assignments_read=False)  # its kept workspaces[] and role stand
    assert rows["first"]["status"] == "running"
    rows = after(lambda: Agent.objects.filter(pk=second.pk).update(owner=t.editor), {ids["second"]},
                 assignments_read=False)
    assert (rows["second"]["isDirectOwner"], rows["second"]["effectiveRole"]) == (True, "owner")
    rows = after(lambda: WorkspaceAgent.objects.filter(agent=third).update(role="pager"), {ids["third"]})
    assert rows["third"]["workspaces"][0]["role"] == "pager"
    rows = after(lambda: WorkspaceAgent.objects.create(workspace=t.workspace, agent=own), {ids["own"]})
    assert [w["id"] for w in rows["own"]["workspaces"]] == [str(t.workspace.pk)]
    rows = after(lambda: Workspace.objects.filter(pk=t.workspace.pk).update(name="Renamed"), set(ids.values()))
    assert {row["workspaces"][0]["name"] for name, row in rows.items() if name in ids} == {"Renamed"}
    # An insertion: the new agent's id is known only after the write.
    client.get("/api/agents")
    reads.clear()
    inserted = t.agent(name="new")
    assert client.get("/api/agents").content == _whole_list(_session(t.editor))
    assert reads == [{str(inserted.pk)}]

    rows = after(lambda: WorkspaceAgent.objects.filter(agent=third).delete(), set())  # it leaves the list
    assert "third" not in rows
    rows = after(lambda: Agent.objects.filter(pk=first.pk).delete(), set())
    assert "first" not in rows
    after(lambda: Agent.objects.filter(pk=second.pk).update(readiness_failures=4, gateway_host_port=19009), set())
    after(lambda: Membership.objects.filter(workspace=t.workspace, user=t.viewer).update(role="admin"), set())

    # The caller's own role changes: its rows were made for other memberships, all read again.
    rows = after(lambda: Membership.objects.filter(workspace=t.workspace, user=t.editor).update(role="admin"),
                 "whole")
    assert rows["new"]["effectiveRole"] == "admin"


@pytest.mark.django_db(transaction=True)
def test_a_write_committed_between_the_revisions_and_the_rows_is_never_kept_as_older(reads, monkeypatch):
    """Another transaction commits between the read of (id, revision) and the read of the rows,
    and between the rows and their assignments: the answer is at least as new as the list read,
    and the next list never serves a row under a revision that is not its data's."""
    t = Tenancy.create()
    client = client_for(t.editor)
    moving, leaving = t.agent(name="moving"), t.agent(name="leaving")
    t.agent(name="still")
    client.get("/api/agents")

    def elsewhere(write) -> None:
        in_thread(write).result()  # its own connection, committed before the list reads on

    # Between the revisions and the rows: a rename of one listed agent, the deletion of another.
    original_revisions = list_rows.agent_list_revisions
    Agent.objects.filter(pk__in=[moving.pk, leaving.pk]).update(status=Status.RUNNING)  # both read again

    def revisions_then_writes(*args, **kwargs):
        found = original_revisions(*args, **kwargs)
        elsewhere(lambda: Agent.objects.filter(pk=moving.pk).update(name="moved"))
        elsewhere(lambda: Agent.objects.filter(pk=leaving.pk).delete())
        return found

    monkeypatch.setattr(list_rows, "agent_list_revisions", revisions_then_writes)
    names = [row["name"] for row in client.get("/api/agents").json()]
    monkeypatch.setattr(list_rows, "agent_list_revisions", original_revisions)
    assert "moved" in names and "moving" not in names  # the row as read, newer than its revision
    assert "leaving" not in names  # gone when its row was read
    reads.clear()
    assert client.get("/api/agents").content == _whole_list(_session(t.editor))
    assert reads == [], "the row read at its new revision is kept under it"

    # Between the rows and their assignments: a relabel, read with the row but under the row's
    # older revisions. The next list must read that row again, never trust it as of them.
    WorkspaceAgent.objects.filter(agent=moving).update(role="first label")  # its assignments are read again
    original_read = selectors._list_read

    def relabel_after(after_read: str, label: str):
        def reading(read, *args, **kwargs):
            found = original_read(read, *args, **kwargs)
            if read == after_read:
                elsewhere(lambda: WorkspaceAgent.objects.filter(agent=moving).update(role=label))
            return found
        return reading

    monkeypatch.setattr(selectors, "_list_read", relabel_after("rows", "relabelled"))
    client.get("/api/agents")
    monkeypatch.setattr(selectors, "_list_read", original_read)
    reads.clear()
    answer = client.get("/api/agents")
    assert answer.content == _whole_list(_session(t.editor))
    assert reads == [{str(moving.pk)}]
    assert {row["name"]: row for row in answer.json()}["moved"]["workspaces"][0]["role"] == "relabelled"

    # A status change keeps the row's links (its assignments are not read); a relabel committed
    # right after its row was read: the links kept are those of the row's revisions, and the
    # next list reads its assignments again.
    Agent.objects.filter(pk=moving.pk).update(status=Status.STOPPED)
    monkeypatch.setattr(selectors, "_list_read", relabel_after("rows", "relabelled again"))
    first = {row["name"]: row for row in client.get("/api/agents").json()}
    monkeypatch.setattr(selectors, "_list_read", original_read)
    assert (first["moved"]["status"], first["moved"]["workspaces"][0]["role"]) == ("stopped", "relabelled")
    reads.clear()
    answer = client.get("/api/agents")
    assert answer.content == _whole_list(_session(t.editor))
    assert reads == [{str(moving.pk)}]
    assert {row["name"]: row for row in answer.json()}["moved"]["workspaces"][0]["role"] == "relabelled again"


@pytest.mark.django_db(transaction=True)
def test_callers_who_see_an_agent_differently_never_share_its_row(reads):
    """One agent in two workspaces: each caller's row shows only the workspaces it may see, with
    its own role, whoever asked first; a key sees its workspace only; a membership removed and
    given back finds rows that are still right."""
    t = Tenancy.create()
    shared = t.agent(name="shared")
    WorkspaceAgent.objects.create(workspace=t.other_workspace, agent=shared, role="elsewhere")
    Membership.objects.create(workspace=t.workspace, user=t.outsider, role="viewer")
    _, secret = make_api_key(workspace=t.workspace, created_by=t.outsider, scopes=("agents:read",))
    callers = {
        "editor": (client_for(t.editor), lambda: _session(t.editor)),
        "outsider": (client_for(t.outsider), lambda: _session(t.outsider)),  # owns the other workspace
        "outsider's key": (client_for(api_key=secret), lambda: principal_from_api_key(secret)),
        "platform admin": (client_for(t.platform_admin), lambda: _session(t.platform_admin)),
    }

    def workspaces_seen() -> dict[str, list]:
        seen = {}
        for name, (client, principal) in callers.items():
            answer = client.get("/api/agents")
            assert answer.content == _whole_list(principal()), name
            row = answer.json()[0]
            seen[name] = ([w["id"] for w in row["workspaces"]], row["effectiveRole"])
        return seen

    here, there = str(t.workspace.pk), str(t.other_workspace.pk)
    expected = {
        "editor": ({here}, "editor"),
        "outsider": ({here, there}, "owner"),
        "outsider's key": ({here}, "viewer"),
        "platform admin": ({here, there}, "admin"),
    }
    for _ in range(2):  # built whole, then from kept rows after a write to the agent
        seen = workspaces_seen()
        assert {name: (set(ids), role) for name, (ids, role) in seen.items()} == expected
        Agent.objects.filter(pk=shared.pk).update(status=Status.RUNNING if _ == 0 else Status.STOPPED)

    # The editor leaves and comes back with the same role: its earlier context again.
    membership = Membership.objects.get(workspace=t.workspace, user=t.editor)
    membership.delete()
    assert client_for(t.editor).get("/api/agents").json() == []
    WorkspaceAgent.objects.filter(agent=shared, workspace=t.workspace).update(role="while away")
    Membership.objects.create(workspace=t.workspace, user=t.editor, role="editor")
    answer = client_for(t.editor).get("/api/agents")
    assert answer.content == _whole_list(_session(t.editor))
    assert answer.json()[0]["workspaces"] == [{"id": here, "name": t.workspace.name, "role": "while away"}]


@pytest.mark.django_db(transaction=True)
def test_every_caller_shape_and_scope_reads_again_only_what_a_write_changed(reads):
    """A session, a workspace key, a platform admin, each with both scopes: each list after a
    write is the list built whole, reading again only the agent written (each shape's reads are
    compiled statements of their own)."""
    t = Tenancy.create()
    mine, *spare = [AgentFactory(owner=t.editor, name=f"mine {index}") for index in range(4)]
    for agent in (mine, *spare):  # the spare ones are never written: most rows stay kept
        WorkspaceAgent.objects.create(workspace=t.workspace, agent=agent)
    shared = t.agent(name="shared")
    t.agent(t.outsider, workspace=t.other_workspace, name="elsewhere")
    _, secret = make_api_key(workspace=t.workspace, created_by=t.editor, scopes=("agents:read",))
    callers = {
        "session": (client_for(t.editor), lambda: _session(t.editor)),
        "key": (client_for(api_key=secret), lambda: principal_from_api_key(secret)),
        "platform admin": (client_for(t.platform_admin), lambda: _session(t.platform_admin)),
    }
    for name, (client, principal) in callers.items():
        for scope in ("owned", "accessible"):
            path = f"/api/agents?scope={scope}"
            assert client.get(path).content == _whole_list(principal(), scope), (name, scope)
            for agent in (mine, shared):
                listed = str(agent.pk) in {row["id"] for row in client.get(path).json()}
                reads.clear()
                Agent.objects.filter(pk=agent.pk).update(name=f"{agent.name} {name} {scope}")
                assert client.get(path).content == _whole_list(principal(), scope), (name, scope, agent.name)
                assert reads == ([{str(agent.pk)}] if listed else []), (name, scope, agent.name)


@pytest.mark.django_db(transaction=True)
def test_kept_rows_stay_within_their_bound_the_least_recently_used_caller_going_first(reads, settings):
    t = Tenancy.create()
    for index in range(40):
        t.agent(name=f"agent-{index}")
    editor, viewer = client_for(t.editor), client_for(t.viewer)
    editor.get("/api/agents")
    one_caller = list_rows.kept_bytes()
    assert one_caller > 40 * list_rows.ENTRY_OVERHEAD

    settings.AGENT_LIST_ROWS_MB = 1
    viewer.get("/api/agents")
    assert list_rows.kept_bytes() == 2 * one_caller  # both kept, within 1 MB

    list_rows.forget_rows()
    settings.AGENT_LIST_ROWS_MB = one_caller * 1.5 / (1024 * 1024)  # room for one caller, not two
    editor.get("/api/agents")
    viewer.get("/api/agents")  # lets the editor's rows go
    assert list_rows.kept_bytes() == one_caller
    reads.clear()
    viewer.get("/api/agents")
    editor.get("/api/agents")
    assert reads == ["whole"]  # the viewer's rows were kept, the editor's read whole again

    settings.AGENT_LIST_ROWS_MB = 0
    list_rows.forget_rows()
    reads.clear()
    editor.get("/api/agents")
    assert reads == [] and list_rows.kept_bytes() == 0  # built whole by agent_list, nothing kept


@pytest.mark.django_db
def test_a_list_read_inside_a_transaction_keeps_no_row(reads, tenancy):
    tenancy.agent()
    client_for(tenancy.editor).get("/api/agents")
    assert reads == [] and list_rows.kept_bytes() == 0
