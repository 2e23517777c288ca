"""execution_target_id -> backend: only registered targets resolve, none is guessed."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.backends import registry
from agents.backends.base import RuntimeBackend
from agents.backends.docker import DockerBackend
from agents.backends.registry import Target, UnknownTarget
from tests.agents.backends.support import FakeAgent


def test_the_docker_target_resolves_to_a_docker_backend_that_follows_the_protocol():
    backend = registry.backend_for_target("docker")
    assert isinstance(backend, DockerBackend)
    assert isinstance(backend, RuntimeBackend)


def test_backend_for_reads_the_agents_execution_target():
    assert isinstance(registry.backend_for(FakeAgent(execution_target_id="docker")), DockerBackend)


@pytest.mark.django_db
@pytest.mark.parametrize("target_id", ["", "external", "k8s:cluster-1", "k8s:00000000-0000-0000-0000-000000000000",
                                       "remote:host-1", "docker:extra", "proxmox"])
def test_targets_without_a_registered_backend_raise_unknown_target(target_id, settings):
    settings.PROXMOX_URL = ""  # proxmox is a target only when configured
    assert not registry.is_registered(target_id)
    with pytest.raises(UnknownTarget):
        registry.backend_for_target(target_id)


@pytest.mark.django_db
def test_unknown_target_is_a_value_error_so_callers_can_answer_400():
    with pytest.raises(ValueError, match="k8s:nope"):
        registry.backend_for_target("k8s:nope")


def test_docker_k8s_proxmox_and_remote_docker_have_backends():
    assert registry.registered_deploy_targets() == {"docker", "k8s", "proxmox", "remote-docker"}
    assert registry.is_registered("docker")


@pytest.mark.django_db
def test_a_registered_cluster_is_a_target_with_a_kubernetes_backend_and_is_probed():
    from agents.backends.kubernetes import KubernetesBackend
    from tests.factories.targets import make_cluster

    cluster = make_cluster()
    assert registry.is_registered(cluster.execution_target_id)
    assert isinstance(registry.backend_for_target(cluster.execution_target_id), KubernetesBackend)
    assert cluster.execution_target_id in registry.probe_targets() and "docker" in registry.probe_targets()


def test_docker_is_its_own_default_execution_target():
    assert registry.default_execution_target("docker") == "docker"


def test_targets_needing_a_concrete_id_get_no_default_and_need_one(monkeypatch):
    monkeypatch.setitem(
        registry.TARGETS, "k8s", Target(deploy_target="k8s", needs_id=True, factory=lambda target_id: DockerBackend())
    )
    assert registry.default_execution_target("k8s") is None
    assert registry.is_registered("k8s:cluster-1")
    assert not registry.is_registered("k8s")
    assert registry.registered_deploy_targets() == {"docker", "k8s", "proxmox", "remote-docker"}


def test_a_deploy_target_nobody_registered_has_no_default():
    assert registry.default_execution_target("remote-docker") is None
    assert registry.default_execution_target("nonsense") is None


def test_each_row_declares_the_sandbox_profiles_and_disk_rule_of_its_target():
    assert {kind: registry.sandbox_profiles_of(row.deploy_target) for kind, row in registry.TARGETS.items()} == {
        "docker": ("standard", "nemoclaw"), "k8s": ("standard", "nemoclaw"),
        "remote": ("standard", "nemoclaw"), "proxmox": ("standard",)}
    shrinks = {kind: registry.disk_shrink_refusal_of(row.deploy_target) is None
               for kind, row in registry.TARGETS.items()}
    assert shrinks == {"docker": True, "remote": True, "k8s": False, "proxmox": False}
    assert registry.sandbox_profiles_of("nonsense") == ("standard", "nemoclaw")


@pytest.mark.django_db
def test_deploy_selection_asks_the_row_which_profiles_a_target_runs(monkeypatch, user, settings):
    """Selection names no target: a row that drops nemoclaw refuses it with the same words."""
    from tests.support import client_for

    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]
    monkeypatch.setitem(registry.TARGETS, "docker", replace(registry.TARGETS["docker"], sandbox_profiles=("standard",)))

    response = client_for(user).post("/api/agents/deploy", {"sandbox_profile": "nemoclaw"}, format="json")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert response.json()["fields"]["sandbox_profile"] == ["The nemoclaw profile is not available on docker."]
