"""GET /api/agents with 1,000 agents over 50 workspaces: queries per request, median and p95.

    python -m bench agents_list      (throwaway database; see bench/__init__.py)

One caller is an editor of all 50 workspaces; 1,000 agents of 20 other users are each assigned
to one or two of them, and 50 more are the caller's own. The request runs in-process through
Django's test client (no network), with the caller's Bearer session, so the figures are the
control plane's own time: routing, authentication, the reads and the JSON encoding; the
selector agent_list() is timed alone beside it. The gzip lines time the compression of this body per level
(Django's GZipMiddleware uses 6; fleet.api.gzip a lower one).
Targets (docs/performance.md): at most 4 queries, median at most 10 ms at one client.
"""

from __future__ import annotations

import gzip
import time
import zlib

AGENTS = 1_000
WORKSPACES = 50
OWNERS = 20
OWN_AGENTS = 50


def fleet_create(*, agents: int = AGENTS + OWN_AGENTS, tag: str = "bench"):
    """The caller, editor of WORKSPACES workspaces, and its fleet: `agents` - OWN_AGENTS agents of
    OWNERS other users, each assigned to one or two of the workspaces, and OWN_AGENTS of its own.
    Returns (caller, the agents, the workspaces); `tag` keeps two fleets in one database apart."""
    from accounts.models import User
    from agents.models import Agent, WorkspaceAgent
    from workspaces.models import Membership, Workspace

    caller = User.objects.create_user(f"{tag}-caller@example.com")
    owners = User.objects.bulk_create([User(email=f"{tag}-owner-{i}@example.com") for i in range(OWNERS)])
    workspaces = Workspace.objects.bulk_create(
        [Workspace(name=f"{tag} workspace {i}", owner=owners[i % OWNERS]) for i in range(WORKSPACES)]
    )
    Membership.objects.bulk_create([Membership(workspace=w, user=caller, role="editor") for w in workspaces])
    shared = agents - OWN_AGENTS
    made = Agent.objects.bulk_create(
        [
            Agent(name=f"{tag}-agent-{i}", owner=owners[i % OWNERS], status="running", node="bench",
                  container_id=f"{i:064x}", container_name=f"fleet-{tag}-{i}", gateway_host_port=19000 + i % 1000)
            for i in range(shared)
        ]
        + [Agent(name=f"{tag}-own-{i}", owner=caller, status="stopped") for i in range(OWN_AGENTS)]
    )
    assignments = []
    for i, agent in enumerate(made[:shared]):
        assignments.append(WorkspaceAgent(workspace=workspaces[i % WORKSPACES], agent=agent))
        if i % 3 == 0:
            assignments.append(WorkspaceAgent(workspace=workspaces[(i + 7) % WORKSPACES], agent=agent))
    WorkspaceAgent.objects.bulk_create(assignments)
    return caller, made, workspaces


def main() -> None:
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from accounts.tokens import session_token_issue
    from agents.selectors import agent_list
    from bench import measure, report
    from fleet.api.principal import Principal

    caller, _, _ = fleet_create()
    client = Client(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=caller)}")

    def fetch():
        response = client.get("/api/agents")
        assert response.status_code == 200, response.content[:200]
        return response

    reset_queries()  # the request resets the log; start empty so the capture's offsets hold
    with CaptureQueriesContext(connection) as captured:
        body = fetch().content
    rows = len(__import__("orjson").loads(body))
    timing = measure(fetch, repeat=100, warmup=5)
    # Wall-clock figures suffer when other work shares the machine; the process's own CPU time
    # per request (database server excluded) says what the control plane itself costs.
    cpu_start = time.process_time()
    for _ in range(20):
        fetch()
    cpu_ms = (time.process_time() - cpu_start) / 20 * 1000
    principal = Principal(user=caller)
    served = measure(lambda: agent_list(principal), repeat=50, warmup=3)
    report("agent_list() selector alone", median_ms=served.median_ms, p95_ms=served.p95_ms)
    for level in (1, 3, 4, 5, 6):
        compressor = measure(lambda level=level: zlib.compress(body, level), repeat=30, warmup=2)
        report(f"gzip level {level} of the body", median_ms=compressor.median_ms,
               kb=len(zlib.compress(body, level)) / 1024)
    gzipped = client.get("/api/agents", HTTP_ACCEPT_ENCODING="gzip")
    report(
        f"GET /api/agents ({rows} agents, {WORKSPACES} workspaces, one client)",
        queries=len(captured.captured_queries),
        median_ms=timing.median_ms,
        p95_ms=timing.p95_ms,
        requests_per_s=timing.per_second,
        cpu_ms_per_request=cpu_ms,
        body_kb=len(body) / 1024,
        gzip_kb=len(gzipped.content) / 1024 if gzipped.get("Content-Encoding") == "gzip"
        else len(gzip.compress(body)) / 1024,
    )
