"""The database dropping the web process's connections (a restart, a failover), with the
Procfile's web server (one worker, so each call finds the connection the drop broke): the call
that finds its connection gone is answered 503 in the provider's format and never sent; the next
call opens a new connection and goes through; every call that went through is metered once, the
settling thread's connection broken too. For an agent with a budget (the reservation's write)
and one without (the caller's read alone)."""

from __future__ import annotations

import json

import pytest
import requests
from django.db import connection

from agents.models import RateSource, UsageEvent
from tests.factories.agents import make_budget
from tests.infra.web_server import procfile_web_server
from tests.support import wait_until

from .support import route_through_gateway

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "postgresql", reason="a database server's connections")]

BODY = json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10})


# The server's connections carry this name (libpq reads PGAPPNAME), so that only they are dropped,
# not those of a worker another test of this process keeps.
SERVER_CONNECTIONS = "fleet-test-database-away"


def _drop_the_servers_connections() -> int:
    """What a database restart does to the server's connections."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND application_name = %s", [SERVER_CONNECTIONS])
        return cursor.fetchone()[0]


def _metered(agent) -> int:
    return UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY).count()


def test_a_call_that_finds_its_connection_dropped_is_a_503_and_the_next_one_goes_through(
        tmp_path, tenancy, fake_provider, priced):
    budgeted = route_through_gateway(tenancy.agent(status="running"), base_url=fake_provider.base_url)
    make_budget(budgeted.agent, limit_usd=10)
    unbudgeted = route_through_gateway(tenancy.agent(status="running", owner=tenancy.editor),
                                       base_url=fake_provider.base_url)
    env = {"OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "WEB_CONCURRENCY": "1", "LOG_LEVEL": "WARNING",
           "PGAPPNAME": SERVER_CONNECTIONS}
    with procfile_web_server(tmp_path, env=env) as url:
        def call(routed) -> requests.Response:
            return requests.post(f"{url}/llm/v1/chat/completions", data=BODY, timeout=30,
                                 headers={**routed.auth, "content-type": "application/json"})

        answers = {}
        for name, routed in (("budgeted", budgeted), ("unbudgeted", unbudgeted)):
            assert call(routed).status_code == 200, name
            # The worker's connections are open, the settling thread's too.
            wait_until(lambda r=routed: _metered(r.agent) == 1, timeout=10, interval=0.1)
            sent = len(fake_provider.requests)
            assert _drop_the_servers_connections() == 2, name  # admission's and settlement's
            answers[name] = (call(routed), call(routed), len(fake_provider.requests) - sent)

        for name, (away, again, reached) in answers.items():
            assert away.status_code == 503, (name, away.text)
            assert away.json()["error"]["code"] == "database_unavailable", name
            assert again.status_code == 200, (name, again.text)
            assert reached == 1, name  # the refused call never reached the provider
        for routed in (budgeted, unbudgeted):
            wait_until(lambda r=routed: _metered(r.agent) == 2, timeout=10, interval=0.2)
