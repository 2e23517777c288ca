"""agent_resources_change and disk_gb: where it is metadata only (docker, remote-docker) it may go
down; where it is real storage (k8s, proxmox: tests/agents/targets) it only grows."""

from __future__ import annotations

import pytest

from agents.models import Status
from agents.services.resources import ResourceChange, agent_resources_change
from fleet.api.principal import Principal
from tests.factories.remote_hosts import RemoteHostFactory

pytestmark = pytest.mark.django_db


def test_a_docker_agents_disk_is_metadata_and_may_shrink(tenancy):
    agent = tenancy.agent(disk_gb=20)

    changed = agent_resources_change(principal=Principal(user=tenancy.agent_owner), agent=agent,
                                     change=ResourceChange(disk_gb=5))

    assert changed.disk_gb == 5 and changed.status == Status.QUEUED


def test_a_remote_docker_agents_disk_is_metadata_and_may_shrink(tenancy):
    host = RemoteHostFactory(owner=tenancy.agent_owner)
    agent = tenancy.agent(disk_gb=20, deploy_target="remote-docker", execution_target_id=host.execution_target_id)

    changed = agent_resources_change(principal=Principal(user=tenancy.agent_owner), agent=agent,
                                     change=ResourceChange(disk_gb=5))

    assert changed.disk_gb == 5 and changed.status == Status.QUEUED
