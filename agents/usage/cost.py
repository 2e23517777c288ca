"""GET /workspaces/cost: token cost per workspace and per agent, with a per-model breakdown.

Two aggregate statements over the daily rollup (UsageDaily), whatever the number of agents:
one for the agents assigned to the caller's workspaces, one for the caller's own agents in no
workspace. Each sums the usage per agent and model first, then joins the agents to it. \
A session sees every workspace it is a member of plus its unassigned agents; a
workspace API key needs `workspaces:read` and sees only its workspace, with `unassigned` empty.

`workspaceTotalUsd` adds up the workspaces, so an agent in two workspaces counts twice;
`uniqueFleetTotalUsd` counts every agent of the report once, unassigned ones included.
Agents with no usage in the period are listed with zeros.
"""

from __future__ import annotations

from collections import defaultdict
from uuid import UUID

from django.db import connection

from fleet.api.principal import Principal
from workspaces.access import workspaces_visible_to

from ..models import Agent, UsageDaily, WorkspaceAgent
from ..models.money import micros_to_usd
from ..targets.access import hidden_deploy_targets
from .window import CostWindow


def _tables() -> dict[str, str]:
    q = connection.ops.quote_name
    return {
        "agent": q(Agent._meta.db_table),
        "daily": q(UsageDaily._meta.db_table),
        "assignment": q(WorkspaceAgent._meta.db_table),
    }


def _uuid(value):
    return Agent._meta.pk.get_db_prep_value(value, connection)


def _as_uuid(value) -> UUID:
    """PostgreSQL returns UUIDs, SQLite their hex text."""
    return value if isinstance(value, UUID) else UUID(value)


def _usage_by_model(agents_sql: str, window: CostWindow) -> tuple[str, list]:
    """A CTE `u`: usage summed per agent, model, provider and rate source over the window, for
    the agents `agents_sql` selects. Aggregated before any join, so an agent in two workspaces
    is summed once and the join that follows only copies a few rows."""
    day = connection.ops.adapt_datefield_value
    sql = (
        "u AS (SELECT d.agent_id, d.model, d.provider, d.rate_source, SUM(d.input_tokens) AS input_tokens, "
        "SUM(d.output_tokens) AS output_tokens, SUM(d.cost_micros) AS cost_micros FROM {daily} d "
        f"WHERE d.day >= %s AND d.day <= %s AND d.agent_id IN ({agents_sql}) "
        "GROUP BY d.agent_id, d.model, d.provider, d.rate_source)"
    )
    return sql, [day(window.start), day(window.end)]


_USAGE_COLUMNS = "u.model, u.provider, u.rate_source, u.input_tokens, u.output_tokens, u.cost_micros"


def _workspace_rows(workspace_ids: list, window: CostWindow, *, hidden_targets: tuple[str, ...]) -> list[tuple]:
    """(workspace id, agent id, name, model, provider, rate_source, input, output, cost) rows,
    leaving out agents deployed to `hidden_targets` (what the caller may not see)."""
    if not workspace_ids:
        return []
    in_workspaces = "wa.workspace_id IN ({})".format(", ".join(["%s"] * len(workspace_ids)))
    ids = [_uuid(w) for w in workspace_ids]
    visible = "".join(" AND a.deploy_target <> %s" for _ in hidden_targets)
    usage, usage_params = _usage_by_model(f"SELECT wa.agent_id FROM {{assignment}} wa WHERE {in_workspaces}", window)
    sql = (
        f"WITH {usage} SELECT wa.workspace_id, a.id, a.name, {_USAGE_COLUMNS} "
        "FROM {assignment} wa JOIN {agent} a ON a.id = wa.agent_id LEFT JOIN u ON u.agent_id = a.id "
        f"WHERE {in_workspaces}{visible}"
    ).format(**_tables())
    with connection.cursor() as cursor:
        cursor.execute(sql, [*usage_params, *ids, *ids, *hidden_targets])
        return cursor.fetchall()


def _unassigned_rows(user_id, window: CostWindow) -> list[tuple]:
    """(agent id, name, model, ...) rows for the user's own agents that are in no workspace."""
    mine = (
        "SELECT a.id FROM {agent} a WHERE a.owner_id = %s AND NOT EXISTS "
        "(SELECT 1 FROM {assignment} wa WHERE wa.agent_id = a.id)"
    )
    usage, usage_params = _usage_by_model(mine, window)
    sql = (
        f"WITH {usage} SELECT a.id, a.name, {_USAGE_COLUMNS} FROM {{agent}} a LEFT JOIN u ON u.agent_id = a.id "
        "WHERE a.owner_id = %s AND NOT EXISTS (SELECT 1 FROM {assignment} wa WHERE wa.agent_id = a.id)"
    ).format(**_tables())
    owner = Agent._meta.get_field("owner").target_field.get_db_prep_value(user_id, connection)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*usage_params, owner, owner])
        return cursor.fetchall()


def _agent_rows(rows) -> dict:
    """(agent id, name, model, provider, rate_source, in, out, cost) rows -> agent id -> perAgent row."""
    agents: dict = {}
    for agent_id, name, model, provider, rate_source, input_tokens, output_tokens, cost in rows:
        agent_id = _as_uuid(agent_id)
        entry = agents.get(agent_id)
        if entry is None:
            entry = agents[agent_id] = {"agentId": agent_id, "agentName": name, "micros": 0, "input": 0,
                                        "output": 0, "models": []}
        if model is None:  # the LEFT JOIN found no usage in the period
            continue
        input_tokens, output_tokens, cost = int(input_tokens), int(output_tokens), int(cost)
        entry["micros"] += cost
        entry["input"] += input_tokens
        entry["output"] += output_tokens
        entry["models"].append({
            "model": model,
            "provider": provider,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
            "rate_source": rate_source,
            "token_cost": micros_to_usd(cost),
            "_micros": cost,
        })
    return agents


def _per_agent_body(entry: dict) -> dict:
    models = sorted(entry["models"], key=lambda m: (-m["_micros"], m["model"], m["provider"], m["rate_source"]))
    for model in models:
        del model["_micros"]
    cost = micros_to_usd(entry["micros"])
    return {
        "agentId": entry["agentId"],
        "agentName": entry["agentName"],
        "token_cost": cost,
        "total_cost": cost,
        "input_tokens": entry["input"],
        "output_tokens": entry["output"],
        "total_tokens": entry["input"] + entry["output"],
        "cost_details": {"tokens": {"models": models}},
    }


def _group_body(entries) -> tuple[int, list[dict]]:
    ordered = sorted(entries, key=lambda e: (-e["micros"], e["agentName"], str(e["agentId"])))
    return sum(e["micros"] for e in ordered), [_per_agent_body(e) for e in ordered]


def workspace_cost_report(*, principal: Principal, window: CostWindow) -> dict:
    workspaces = list(workspaces_visible_to(principal).order_by("name", "id").values_list("id", "name"))
    by_workspace: dict = defaultdict(list)
    hidden = hidden_deploy_targets(principal)
    for workspace_id, *rest in _workspace_rows([w for w, _ in workspaces], window, hidden_targets=hidden):
        by_workspace[_as_uuid(workspace_id)].append(rest)
    unassigned = _agent_rows(_unassigned_rows(principal.user.pk, window)) if principal.is_session else {}

    fleet_micros: dict = {agent_id: e["micros"] for agent_id, e in unassigned.items()}
    workspace_bodies, workspace_total = [], 0
    for workspace_id, name in workspaces:
        agents = _agent_rows(by_workspace.get(workspace_id, []))
        fleet_micros.update({agent_id: e["micros"] for agent_id, e in agents.items()})
        total, per_agent = _group_body(agents.values())
        workspace_total += total
        workspace_bodies.append({"workspaceId": workspace_id, "workspaceName": name,
                                 "totalUsd": micros_to_usd(total), "perAgent": per_agent})
    unassigned_total, unassigned_agents = _group_body(unassigned.values())
    return {
        "periodDays": window.days,
        "periodStart": window.start,
        "periodEnd": window.end,
        "workspaceTotalUsd": micros_to_usd(workspace_total),
        "uniqueFleetTotalUsd": micros_to_usd(sum(fleet_micros.values())),
        "workspaces": workspace_bodies,
        "unassigned": {"totalUsd": micros_to_usd(unassigned_total), "perAgent": unassigned_agents},
    }
