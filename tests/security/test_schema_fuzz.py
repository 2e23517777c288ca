"""Schema-driven fuzzing against a live server: Schemathesis generates requests (valid and
invalid) for every operation of the OpenAPI document Fleet serves, sends them over HTTP to the
Procfile's own web process (granian serving the async edge, two workers) on loopback serving the test database,
with a session, a workspace API key or no credential, and every answer must be below 500, with
every error in the one error body {"error", "code"[, "fields"]}. Requests go out four at a time
while the next ones are generated.

At least FUZZ_REQUESTS (10,000; FLEET_FUZZ_REQUESTS overrides) requests per run. Path ids are
the world's real workspace, agent and rule half of the time, so the generated bodies reach the
views behind access control rather than stopping at 404. Failures are collected (no shrinking:
the first example of each failing operation and status is kept) and reported together.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import schemathesis
import schemathesis.transport.wsgi  # noqa: F401 - imported now, not by four sending threads at once (a CPython 3.11 race)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.generation.modes import GenerationMode

from accounts.models import User
from accounts.tokens import session_token_issue
from agents.models import Agent
from agents.targets.k8s_clusters import K8sCluster
from agents.targets.models import RemoteHost
from channels.models import LegacyChannel
from channels.services import legacy_channel_create
from fleet.gunicorn_conf import limit_request_line
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.alerts import make_rule
from tests.factories.remote_hosts import RemoteHostFactory
from tests.factories.targets import make_cluster
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.infra.web_server import procfile_web_server
from workspaces.models import Invitation
from workspaces.roles import Role
from workspaces.services import invitation_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]

PLATFORM_ADMIN_FUZZED = ("/admin/k8s-clusters", "/admin/remote-hosts")  # within an operation's path
FUZZ_REQUESTS = int(os.environ.get("FLEET_FUZZ_REQUESTS", "10000"))
PASSWORD = "fuzz-password-1"
ERROR_KEYS = {"error", "code", "fields"}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class World:
    """A workspace the fuzzing user administers (not owns: it must survive DELETE), an agent of
    theirs shared into it, a rule, a key of every scope, a Remote Docker host of theirs and a
    Kubernetes cluster (with a platform admin for the registered-target admin routes); a Hermes
    agent with a legacy Telegram channel (the channel routes and the public inbound webhook
    behind their 404), an invitation of the workspace and one to the fuzzing user from another
    workspace."""

    def __init__(self):
        owner = UserFactory()
        self.workspace = WorkspaceFactory(owner=owner)
        self.user = make_member(self.workspace, Role.ADMIN, UserFactory(password=PASSWORD))
        self.key = make_api_key(workspace=self.workspace, scopes=["agents:read", "agents:write", "workspaces:read"])[1]
        self.rule = make_rule(workspace=self.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])
        # A platform admin's session reaches the registered-target routes' bodies (kubeconfigs,
        # platform hosts); only those: elsewhere it could delete the world's own users.
        self.platform_admin = AdminFactory(password=PASSWORD)
        self.inviting_workspace = WorkspaceFactory(owner=UserFactory())
        self.agent = self.host = self.cluster = None
        self.hermes = self.channel = self.invitation = self.my_invitation = None
        self._tokens: dict[int, str] = {}
        self.changed = True  # a write was sent since the world was last checked
        self.refresh()

    def refresh(self):
        """Put back what the requests sent since the last check may have removed, and issue new
        sessions (a generated logout or password change ends one). Only after a write: checking
        before every request cost a quarter of the run."""
        if not self.changed:
            return
        self.changed = False
        self._tokens.clear()
        self.ensure_agent()
        self.ensure_targets()

    def ensure_targets(self):
        """A personal host of the user and a cluster, again when a generated DELETE removed them.
        Both on loopback, which the server's outbound rule refuses: nothing is ever dialled."""
        if self.host is None or not RemoteHost.objects.filter(pk=self.host.pk).exists():
            self.host = RemoteHostFactory(owner=self.user, host="127.0.0.1", port=9)
        if self.cluster is None or not K8sCluster.objects.filter(pk=self.cluster.pk).exists():
            self.cluster = make_cluster()

    def ensure_agent(self):
        """The agents, the channel and the invitations, again when a generated DELETE (or an
        acceptance) removed them."""
        if self.agent is None or not Agent.objects.filter(pk=self.agent.pk).exists():
            self.agent = AgentFactory(owner=self.user, status="stopped", container_id="")
            WorkspaceAgentFactory(workspace=self.workspace, agent=self.agent)
        if self.hermes is None or not Agent.objects.filter(pk=self.hermes.pk).exists():
            self.hermes = AgentFactory(owner=self.user, status="stopped", container_id="", runtime_family="hermes")
            WorkspaceAgentFactory(workspace=self.workspace, agent=self.hermes)
        if self.channel is None or not LegacyChannel.objects.filter(pk=self.channel.pk).exists():
            self.channel = legacy_channel_create(agent=self.hermes, type_="telegram", config={"botToken": "1:fuzz"})
        if self.invitation is None or not Invitation.objects.filter(pk=self.invitation.pk).exists():
            self.invitation = invitation_create(workspace=self.workspace, invited_by=self.workspace.owner,
                                                acting_role=Role.OWNER, email="invitee@example.com",
                                                role=Role.VIEWER)
        if self.my_invitation is None or not Invitation.objects.filter(pk=self.my_invitation.pk).exists():
            self.inviting_workspace.memberships.filter(user=self.user).delete()  # an acceptance joined it
            self.my_invitation = invitation_create(workspace=self.inviting_workspace,
                                                   invited_by=self.inviting_workspace.owner,
                                                   acting_role=Role.OWNER, email=self.user.email, role=Role.VIEWER)

    def headers(self, credential: str, path: str = "") -> dict[str, str]:
        if credential == "platform_admin" and any(part in path for part in PLATFORM_ADMIN_FUZZED):
            return {"Authorization": f"Bearer {self._token(self.platform_admin.pk)}"}
        if credential in ("session", "platform_admin"):
            return {"Authorization": f"Bearer {self._token(self.user.pk)}"}
        if credential == "key":
            return {"X-Api-Key": self.key}
        return {}

    def _token(self, user_id: int) -> str:
        if user_id not in self._tokens:
            self._tokens[user_id] = session_token_issue(user=User.objects.get(pk=user_id))
        return self._tokens[user_id]

    def real_ids(self, path_parameters: dict, legacy: bool) -> dict[str, str]:
        """Real ids for a case's path; `legacy`: a channel route gets the Hermes agent and its
        legacy channel (else the OpenClaw agent and the telegram type)."""
        agent = self.hermes if legacy and "cid" in path_parameters else self.agent
        invitation = self.invitation if "workspace_id" in path_parameters else self.my_invitation
        return {"workspace_id": str(self.workspace.id), "agent_id": str(agent.id), "rule_id": str(self.rule.id),
                "workspaceId": str(self.workspace.id), "agentId": str(agent.id), "host_id": str(self.host.id),
                "cluster_id": str(self.cluster.id),
                "cid": str(self.channel.id) if legacy else "telegram", "channel_id": str(self.channel.id),
                "invitation_id": str(invitation.id)}


def error_body_problem(response) -> str | None:
    """Why an answer breaks the contract (5xx, or an error outside the one error body), or None."""
    if response.status_code >= 500:
        return f"server error {response.status_code}: {response.text[:300]}"
    if response.status_code < 400 or response.request.method == "HEAD":
        return None
    if response.status_code == 414 and _request_line_length(response.request) > limit_request_line:
        return None  # refused by gunicorn before Django sees it: no route can answer it
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} without a JSON body: {response.text[:200]!r}"
    if not isinstance(body, dict) or not set(body) <= ERROR_KEYS or not {"error", "code"} <= set(body):
        return f"{response.status_code} body is not the error body: {str(body)[:200]}"
    if not isinstance(body["error"], str) or not body["error"] or not isinstance(body["code"], str):
        return f"{response.status_code} error body with a bad error or code: {body}"
    return None


def _request_line_length(request) -> int:
    """`GET /path?query HTTP/1.1` as gunicorn measures it (without the line end)."""
    url = urlsplit(request.url)
    target = url.path + (f"?{url.query}" if url.query else "")
    return len(f"{request.method} {target} HTTP/1.1")


@pytest.fixture
def server(transactional_db, tmp_path):
    env = {
        "OUTBOUND_TIMEOUT_SECONDS": "0.5",  # adopted endpoints and webhooks on public addresses
        "DOCKER_HOST": "unix:///nonexistent/fleet-fuzz.sock",  # engine calls fail at once (502)
        "LOG_LEVEL": "ERROR",
        # Remote Docker hosts only on loopback, which the outbound rule refuses: a generated host
        # address is never dialled (SSH tests, gateways), whatever a PATCH sets.
        "REMOTE_HOST_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
    }
    with procfile_web_server(tmp_path, env=env) as url:
        yield url


def test_generated_requests_over_every_route_get_no_5xx_and_the_design_error_body(server):
    world = World()
    schema = schemathesis.openapi.from_url(f"{server}/api/schema/?format=json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 30, "the schema lists fewer operations than the API has"
    sessions = threading.local()
    lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=4)
    pending: list = []
    sent: Counter[str] = Counter()
    failures: dict[tuple[str, str], str] = {}
    started = time.monotonic()

    def run(operation, examples: int) -> None:
        cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                          operation.as_strategy(GenerationMode.NEGATIVE))

        @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(case=cases, credential=st.sampled_from(["session", "key", "none", "platform_admin"]),
               real=st.booleans(), legacy=st.booleans())
        def send(case, credential, real, legacy):
            world.refresh()
            if real and case.path_parameters:
                ids = world.real_ids(case.path_parameters, legacy)
                case.path_parameters = {k: ids.get(k, v) for k, v in case.path_parameters.items()}
            headers = {k: v for k, v in (case.headers or {}).items()
                       if k.lower() not in ("authorization", "x-api-key", "x-service-api-key", "cookie")}
            case.headers = {**headers, **world.headers(credential, operation.path)}
            pending.append(pool.submit(call, operation.label, case))

        send()

    def call(label, case):
        session = getattr(sessions, "session", None) or requests.Session()
        sessions.session = session
        try:
            response = case.call(base_url=server, session=session, timeout=30)
        except (requests.exceptions.InvalidHeader, ValueError):
            return  # a header requests itself refuses to send: nothing reached the server
        problem = error_body_problem(response)
        with lock:
            sent[label] += 1
            if case.method.upper() not in SAFE_METHODS:
                world.changed = True
        if problem:
            failures.setdefault((label, problem[:40]), f"{case.method} {case.formatted_path} "
                                f"body={str(case.body)[:200]} -> {problem}")

    def drain():
        for future in pending:
            future.result()
        pending.clear()
    # Rounds until the budget is spent: operations with few distinct inputs run out early, and the
    # others take their share in the next round.
    for _ in range(6):
        remaining = FUZZ_REQUESTS - sum(sent.values())
        if remaining <= 0:
            break
        before = sum(sent.values())
        per_operation = max(10, math.ceil(remaining / len(operations)))
        for operation in operations:
            run(operation, per_operation)
        drain()
        if sum(sent.values()) == before:
            break

    pool.shutdown()
    elapsed = time.monotonic() - started
    sys.stderr.write(f"\nschema fuzz: {sum(sent.values())} requests over {len(sent)} operations in {elapsed:.0f} s\n")
    assert not failures, "\n".join(sorted(failures.values()))
    assert sum(sent.values()) >= FUZZ_REQUESTS
    assert len(sent) == len(operations), f"operations never called: {set(o.label for o in operations) - set(sent)}"
