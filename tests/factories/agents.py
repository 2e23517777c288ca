import factory

from agents.models import Agent, Status, WorkspaceAgent

from .accounts import UserFactory
from .workspaces import WorkspaceFactory


class AgentFactory(factory.django.DjangoModelFactory):
    """A provisioned-looking Docker agent (running, with a container reference)."""

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
    container_name = factory.LazyAttribute(lambda o: f"fleet-{o.name}")
    gateway_host_port = factory.Sequence(lambda n: 19000 + n % 1000)


class WorkspaceAgentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkspaceAgent

    workspace = factory.SubFactory(WorkspaceFactory)
    agent = factory.SubFactory(AgentFactory)
    role = "member"
