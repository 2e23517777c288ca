"""What the audit log costs a request: the insert, and the list and detail routes with it on and off.

In-process (Django test client, DEBUG off), one client, one caller:
- the audit INSERT alone (`audit_record` in its own transaction);
- a write route, PATCH /api/workspaces/:id/members/:uid (a role flipped back and forth), with
  auditing on (the request's transaction and its row) and off (the recorder unregistered for the
  measurement: no transaction, no row), side by side;
- a list and a detail read (GET .../members, GET /api/workspaces/:id) on and off: reads do no
  audit work, so the two columns should match.
On and off alternate call by call, so a busy machine weighs on both alike.
"""

from __future__ import annotations

import time

from django.test import Client, override_settings

from bench import Timing, measure, report

REPEAT = 300


def main() -> None:
    from accounts.models import User
    from accounts.tokens import session_token_issue
    from audit.actors import Actor
    from audit.models import AuditEntry
    from audit.requests import record_api_write
    from audit.scopes import workspaces_of_path
    from audit.services import audit_record
    from fleet.api import writes
    from workspaces.models import Membership
    from workspaces.roles import Role
    from workspaces.services import workspace_create

    owner = User.objects.create_user(email="bench-audit@example.com", password="bench-audit-pw-1")
    member = User.objects.create_user(email="bench-audit-member@example.com", password="bench-audit-pw-2")
    workspace = workspace_create(owner=owner, name="Audit bench")
    Membership.objects.create(workspace=workspace, user=member, role=Role.VIEWER.label)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=owner)}")
    member_url = f"/api/workspaces/{workspace.id}/members/{member.id}"
    roles = iter(["editor", "viewer"] * REPEAT * 4)

    def patch():
        response = client.patch(member_url, {"role": next(roles)}, content_type="application/json")
        assert response.status_code == 200, response.content

    def get(url):
        def call():
            assert client.get(url).status_code == 200
        return call

    actor = Actor(user=owner, label=owner.email, ip="127.0.0.1")
    insert = measure(lambda: audit_record(action="bench.insert", source="api", actor=actor,
                                          target_type="workspace-member", target_id=member.id,
                                          workspace_id=workspace.id, detail=["role"]), repeat=REPEAT)
    report("audit INSERT alone", median_ms=insert.median_ms, p95_ms=insert.p95_ms)

    routes = {"PATCH member (write)": patch, "GET members (list)": get(f"/api/workspaces/{workspace.id}/members"),
              "GET workspace (detail)": get(f"/api/workspaces/{workspace.id}")}
    with override_settings(DEBUG=False):
        for title, call in routes.items():
            for _ in range(3):
                call()  # warm-up
            before = AuditEntry.objects.count()
            on, off = _alternate(call, writes, record_api_write, workspaces_of_path)
            rows = AuditEntry.objects.count() - before
            report(title, on_median_ms=on.median_ms, off_median_ms=off.median_ms,
                   added_median_ms=on.median_ms - off.median_ms, on_p95_ms=on.p95_ms, off_p95_ms=off.p95_ms,
                   rows_per_audited_request=rows / REPEAT)


def _alternate(call, writes, recorder, workspaces_of_path) -> tuple[Timing, Timing]:
    """`call` timed REPEAT times with the recorder registered and REPEAT times without, in turn."""
    on, off = [], []
    for _ in range(REPEAT):
        for samples, registered in ((on, recorder), (off, None)):
            writes.register_write_recorder(registered, before=workspaces_of_path)
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
    writes.register_write_recorder(recorder, before=workspaces_of_path)
    return Timing(on), Timing(off)
