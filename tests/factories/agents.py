from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import factory

from agents.backends.engine import backend_of
from agents.budgets.services import budget_upsert
from agents.gateway.tokens import usage_token_for
from agents.models import Agent, Budget, StatsSample, Status, WorkspaceAgent
from agents.services.assignment import workspace_agent_assign
from agents.services.workload import workload_spec_build
from fleet.api.principal import Principal

from .accounts import UserFactory
from .workspaces import WorkspaceFactory


class AgentFactory(factory.django.DjangoModelFactory):
    """A provisioned-looking Docker agent (running, with a container reference)."""

    # A raw row: agent_deploy makes a queued agent and hands it to provisioning, agent_adopt an
    # external one; no service makes an agent in a given status with a container already placed.
    class Meta:
        model = Agent

    name = factory.Sequence(lambda n: f"agent-{n}")
    owner = factory.SubFactory(UserFactory)
    status = Status.RUNNING
    runtime_family = "openclaw"
    deploy_target = "docker"
    execution_target_id = "docker"
    node = "local"
    container_id = factory.Sequence(lambda n: f"{n:064x}")
    # Unique on the engine: the two test workers' engine tests share it (tests/conftest.py).
    container_name = factory.LazyFunction(lambda: f"fleet-agent-{uuid.uuid4().hex[:12]}")
    gateway_host_port = factory.Sequence(lambda n: 19000 + n % 1000)


class WorkspaceAgentFactory(factory.django.DjangoModelFactory):
    """An agent assigned to a workspace by workspace_agent_assign, as its owner would."""

    class Meta:
        model = WorkspaceAgent

    workspace = factory.SubFactory(WorkspaceFactory)
    agent = factory.SubFactory(AgentFactory)
    role = None  # the service's default label

    @classmethod
    def _create(cls, model_class, *, workspace, agent, role) -> WorkspaceAgent:
        assignment, _ = workspace_agent_assign(
            workspace=workspace, principal=Principal(user=agent.owner), agent_id=agent.pk, role=role
        )
        return assignment


def make_budget(agent, *, period: str = "daily", limit_usd: float = 10, soft_threshold_pct: float = 80) -> Budget:
    """The agent's budget for `period`, set by budget_upsert as the API sets it."""
    budget, _ = budget_upsert(
        agent=agent,
        period=period,
        limit_usd=Decimal(str(limit_usd)),
        soft_threshold_pct=Decimal(str(soft_threshold_pct)),
    )
    return budget


def make_samples(agent, *, start: datetime, count: int, every: timedelta = timedelta(seconds=10), **values):
    """`count` history rows of `agent`, `every` apart from `start`; sample i has
    cpu_percent i, pids i and counters 10 x i unless `values` says otherwise."""
    # Raw rows: the sampler's tick stores one sample per agent at the current moment; tests need
    # whole histories at chosen moments.
    rows = [
        StatsSample(
            agent=agent,
            recorded_at=start + i * every,
            cpu_percent=values.get("cpu_percent", float(i)),
            memory_usage_mb=values.get("memory_usage_mb", 100.0),
            memory_limit_mb=values.get("memory_limit_mb", 512.0),
            memory_percent=values.get("memory_percent", 100.0 / 512.0 * 100.0),
            network_rx_mb=values.get("network_rx_mb", 10.0 * i),
            network_tx_mb=values.get("network_tx_mb", 5.0 * i),
            disk_read_mb=values.get("disk_read_mb", 2.0 * i),
            disk_write_mb=values.get("disk_write_mb", 1.0 * i),
            pids=values.get("pids", i),
        )
        for i in range(count)
    ]
    StatsSample.objects.bulk_create(rows, batch_size=5000)
    return rows


def place_on_engine(agent: Agent, *, ram_mb: int = 128) -> Agent:
    """Give `agent` a real container on the configured engine (the docker_settings fixture
    points it at the test engine and image) through the workload spec provisioning builds, and
    record the placement as provisioning would: running, with its container and port."""
    agent.ram_mb = ram_mb
    placement = backend_of(agent).create(agent, workload_spec_build(agent=agent, usage_token=usage_token_for(agent)))
    agent.status = Status.RUNNING
    agent.container_id, agent.container_name = placement.container_id, placement.container_name
    agent.node, agent.gateway_host_port = placement.node, placement.host_port
    agent.save()
    return agent
