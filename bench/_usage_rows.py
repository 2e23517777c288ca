"""Shared by the usage benchmarks: fleets, usage rows and their rollups, generated in SQL."""

from __future__ import annotations

import time

from django.db import connection

MODELS = (("gpt-4o", "openai"), ("gpt-4o-mini", "openai"), ("claude-sonnet-4", "anthropic"),
          ("gemini-2.5-flash", "google"), ("nvidia/nemotron-3-super-120b-a12b", "nvidia"))


def agents_create(count: int, *, owner_email: str, status: str = "running") -> tuple:
    """`count` agents of one owner (no container: a pause needs no engine). Returns (owner, ids)."""
    from accounts.models import User
    from agents.models import Agent

    owner = User.objects.create(email=owner_email)
    Agent.objects.bulk_create(
        (Agent(name=f"bench-{n:05d}", owner=owner, status=status) for n in range(count)), batch_size=2000
    )
    return owner, list(Agent.objects.filter(owner=owner).order_by("name").values_list("id", flat=True))


def usage_rows_generate(rows: int, *, days: int) -> float:
    """`rows` usage events spread evenly over every agent and the last `days` days, then the
    daily rollups built from them exactly as ingestion keeps them. Returns seconds taken."""
    started = time.perf_counter()
    models = ", ".join(f"('{m}', '{p}')" for m, p in MODELS)
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")  # skip per-row FK triggers while generating
        cursor.execute(
            f"""
            WITH fleet AS (SELECT array_agg(id ORDER BY id) AS ids, count(*) AS n FROM agents_agent),
                 models AS (SELECT array_agg(m ORDER BY m) AS names, array_agg(p ORDER BY m) AS providers
                            FROM (VALUES {models}) AS v(m, p))
            INSERT INTO agents_usageevent (agent_id, request_id, model, provider, input_tokens, output_tokens,
                                           cost_micros, rate_source, occurred_at, received_at)
            SELECT fleet.ids[1 + g %% fleet.n], 'req-' || g,
                   models.names[1 + (g / fleet.n) %% {len(MODELS)}],
                   models.providers[1 + (g / fleet.n) %% {len(MODELS)}],
                   500 + g %% 1500, 100 + g %% 700, 1000 + g %% 5000, 'catalog',
                   now() - ((g %% ({days} * 1440)) * interval '1 minute'), now()
            FROM generate_series(1, %s) AS g, fleet, models
            """,
            [rows],
        )
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute(
            """
            INSERT INTO agents_usagedaily (agent_id, day, model, provider, rate_source, input_tokens,
                                           output_tokens, cost_micros, events)
            SELECT agent_id, (occurred_at AT TIME ZONE 'UTC')::date, model, provider, rate_source,
                   sum(input_tokens), sum(output_tokens), sum(cost_micros), count(*)
            FROM agents_usageevent GROUP BY 1, 2, 3, 4, 5
            """
        )
        cursor.execute(
            """
            INSERT INTO agents_agentspendday (agent_id, day, cost_micros)
            SELECT agent_id, day, sum(cost_micros) FROM agents_usagedaily GROUP BY 1, 2
            """
        )
        cursor.execute(
            """
            INSERT INTO agents_agentspendmonth (agent_id, month, cost_micros)
            SELECT agent_id, date_trunc('month', day)::date, sum(cost_micros) FROM agents_agentspendday GROUP BY 1, 2
            """
        )
        cursor.execute("ANALYZE")  # planner statistics, as autovacuum keeps them on a live database
    return time.perf_counter() - started


def budgets_create() -> None:
    """A monthly budget for every agent, a daily one for every third, limits set from the spend:
    every 200th agent over its cap, every 50th over its soft threshold, the rest far below."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            WITH ranked AS (
                SELECT a.id, row_number() OVER (ORDER BY a.name) AS n,
                       coalesce((SELECT sum(s.cost_micros) FROM agents_agentspendday s
                                 WHERE s.agent_id = a.id AND s.day >= date_trunc('month', now())::date), 0) AS month,
                       coalesce((SELECT sum(s.cost_micros) FROM agents_agentspendday s
                                 WHERE s.agent_id = a.id AND s.day = (now() AT TIME ZONE 'UTC')::date), 0) AS today
                FROM agents_agent a
            )
            INSERT INTO agents_budget (id, agent_id, period, limit_micros, soft_threshold_pct, created_at, updated_at)
            SELECT gen_random_uuid(), id, p.period,
                   greatest(1, (CASE WHEN n % 200 = 0 THEN 0.9 WHEN n % 50 = 0 THEN 1.1 ELSE 3 END)
                               * (CASE p.period WHEN 'monthly' THEN month ELSE today END))::bigint,
                   80, now(), now()
            FROM ranked, (VALUES ('monthly'), ('daily')) AS p(period)
            WHERE p.period = 'monthly' OR n % 3 = 0
            """
        )


def table_rows(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")
        return cursor.fetchone()[0]
