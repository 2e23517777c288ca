"""DockerBackend against the real engine: what create builds, and the lifecycle verbs."""

from __future__ import annotations

import pytest
from docker import errors as docker_errors

from agents.backends.base import BackendError, WorkloadMissing
from agents.backends.docker import DockerBackend
from tests.agents.backends.support import MB, FakeAgent, answers_health, http_get, spec_for
from tests.support import wait_until

pytestmark = pytest.mark.usefixtures("docker_settings")


def test_create_runs_a_container_with_the_limits_labels_and_restart_policy(backend, docker_engine):
    agent = FakeAgent()
    placement = backend.create(agent, spec_for(agent, vcpu=0.5, ram_mb=128))

    container = docker_engine.containers.get(placement.container_id)
    host = container.attrs["HostConfig"]
    assert container.status == "running"
    assert placement.container_name == f"fleet-test-{agent.id[:12]}" == container.name
    assert host["NanoCpus"] == 500_000_000
    assert host["Memory"] == 128 * MB
    assert host["RestartPolicy"]["Name"] == "unless-stopped"
    assert host["NetworkMode"] == "host"
    assert container.labels["fleet.agent_id"] == agent.id
    assert container.labels["fleet.managed"] == "true"
    assert container.labels["fleet.host_port"] == str(placement.host_port)
    assert container.labels["fleet.test_case"] == "backend"  # the spec's own labels are kept
    assert 19000 <= placement.host_port <= 19999
    assert placement.node


def test_the_runtime_gets_the_spec_env_and_listens_on_the_allocated_port(backend, docker_engine):
    agent = FakeAgent()
    spec = spec_for(agent)
    placement = backend.create(agent, spec)

    env = dict(
        item.split("=", 1) for item in docker_engine.containers.get(placement.container_id).attrs["Config"]["Env"]
    )
    assert env["OPENCLAW_GATEWAY_TOKEN"] == spec.env["OPENCLAW_GATEWAY_TOKEN"]
    assert env["OPENCLAW_GATEWAY_PORT"] == str(placement.host_port)  # host network: listen there
    wait_until(lambda: answers_health(placement.host_port))
    names = http_get(placement.host_port, "/env")[1].split()
    assert {"OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_GATEWAY_PORT", "FLEET_USAGE_TOKEN"} <= set(names)


def test_a_hermes_runtime_gets_its_port_in_api_server_port(backend, docker_engine):
    agent = FakeAgent(runtime_family="hermes")
    placement = backend.create(agent, spec_for(agent))

    env = docker_engine.containers.get(placement.container_id).attrs["Config"]["Env"]
    assert f"API_SERVER_PORT={placement.host_port}" in env
    assert not any(item.startswith("OPENCLAW_GATEWAY_PORT=") for item in env)
    wait_until(lambda: answers_health(placement.host_port))


def test_a_cpu_limit_above_the_engines_cpus_is_capped_at_them(backend, docker_engine):
    agent = FakeAgent()
    placement = backend.create(agent, spec_for(agent, vcpu=512))

    cpus = docker_engine.info()["NCPU"]
    assert docker_engine.containers.get(placement.container_id).attrs["HostConfig"]["NanoCpus"] == cpus * 1_000_000_000


def test_creating_twice_for_one_agent_gives_one_container(backend, docker_engine):
    agent = FakeAgent()
    first = backend.create(agent, spec_for(agent))
    second = backend.create(agent, spec_for(agent))  # a retried job: the agent row recorded nothing

    assert second == first
    assert len(docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent.id}"})) == 1


def test_a_retried_create_starts_the_container_an_earlier_attempt_left_stopped(backend, docker_engine):
    agent = FakeAgent()
    first = backend.create(agent, spec_for(agent))
    docker_engine.containers.get(first.container_id).stop(timeout=5)

    assert backend.create(agent, spec_for(agent)) == first
    assert docker_engine.containers.get(first.container_id).status == "running"


def test_stop_and_start_really_stop_and_start_the_runtime(backend, docker_engine, deployed):
    backend.stop(deployed)
    container = docker_engine.containers.get(deployed.container_id)
    assert container.status == "exited"
    assert not answers_health(deployed.gateway_host_port)

    backend.start(deployed)
    container.reload()
    assert container.status == "running"
    wait_until(lambda: answers_health(deployed.gateway_host_port))


def test_stop_is_quick_because_the_runtime_exits_on_term(backend, deployed, docker_engine):
    backend.stop(deployed)
    assert docker_engine.containers.get(deployed.container_id).attrs["State"]["ExitCode"] == 0  # not killed


def test_restart_starts_a_new_run_of_the_container(backend, docker_engine, deployed):
    before = backend.inspect(deployed).started_at
    backend.restart(deployed)

    after = backend.inspect(deployed)
    assert after.running and after.started_at > before
    wait_until(lambda: answers_health(deployed.gateway_host_port))


def test_remove_deletes_the_container(backend, docker_engine, deployed):
    backend.remove(deployed)

    with pytest.raises(docker_errors.NotFound):
        docker_engine.containers.get(deployed.container_id)
    assert backend.inspect(deployed).exists is False


def test_remove_finds_the_container_by_label_when_the_agent_recorded_none(backend, docker_engine):
    agent = FakeAgent()
    placement = backend.create(agent, spec_for(agent))  # the job died before saving the placement

    backend.remove(agent)
    with pytest.raises(docker_errors.NotFound):
        docker_engine.containers.get(placement.container_id)


def test_stop_and_remove_of_a_missing_container_do_nothing(backend):
    agent = FakeAgent(container_id="0123456789ab")
    backend.stop(agent)
    backend.remove(agent)


def test_start_restart_and_stats_of_a_missing_container_raise_workload_missing(backend):
    agent = FakeAgent(container_id="0123456789ab")
    for verb in (backend.start, backend.restart, backend.stats):
        with pytest.raises(WorkloadMissing):
            verb(agent)


def test_inspect_of_a_running_container_reports_its_state_and_port(backend, docker_engine, deployed):
    state = backend.inspect(deployed)
    assert (state.exists, state.running, state.status) == (True, True, "running")
    assert state.host_port == deployed.gateway_host_port
    assert state.started_at is not None and state.restart_count == 0
    assert state.node == docker_engine.info()["Name"]  # the engine it runs on


def test_inspect_of_a_container_killed_behind_our_back_says_not_running(backend, docker_engine, deployed):
    docker_engine.containers.get(deployed.container_id).kill()

    state = wait_until(lambda: (s := backend.inspect(deployed)).status == "exited" and s)
    assert state.exists and not state.running
    assert state.exit_code == 137
    assert not state.crash_looping


def test_inspect_of_an_agent_that_never_had_a_container_says_missing(backend):
    state = backend.inspect(FakeAgent())
    assert (state.exists, state.running, state.status) == (False, False, "missing")


def test_the_gateway_endpoint_is_the_loopback_and_the_host_port(backend, deployed):
    assert backend.gateway_endpoint(deployed) == ("127.0.0.1", deployed.gateway_host_port)
    unrecorded = FakeAgent(id=deployed.id)  # the port is read back from the container's label
    assert backend.gateway_endpoint(unrecorded) == ("127.0.0.1", deployed.gateway_host_port)


def test_bridge_mode_publishes_the_gateway_port_on_the_allocated_host_port(docker_engine):
    # This engine has no bridge network, so the container runs unreachable; its config is the point.
    backend = DockerBackend(network_mode="bridge")
    agent = FakeAgent()
    placement = backend.create(agent, spec_for(agent))

    container = docker_engine.containers.get(placement.container_id)
    bindings = container.attrs["HostConfig"]["PortBindings"]
    assert [b["HostPort"] for b in bindings["18789/tcp"]] == [str(placement.host_port)]
    assert "OPENCLAW_GATEWAY_PORT=18789" in container.attrs["Config"]["Env"]  # listens on its own port
    assert container.labels["fleet.host_port"] == str(placement.host_port)


def test_limits_the_engine_refuses_give_a_permanent_error_and_leave_no_container(backend, docker_engine):
    agent = FakeAgent()
    with pytest.raises(BackendError) as caught:
        backend.create(agent, spec_for(agent, ram_mb=1))  # below the engine's 6 MB minimum

    assert caught.value.transient is False
    assert "memory" in str(caught.value).lower()
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent.id}"})


def test_a_name_taken_by_a_container_of_another_agent_is_a_permanent_error(backend):
    owner, intruder = FakeAgent(), FakeAgent()
    name = f"fleet-test-shared-{owner.id[:8]}"
    backend.create(owner, spec_for(owner, name=name))

    with pytest.raises(BackendError) as caught:
        backend.create(intruder, spec_for(intruder, name=name))
    assert caught.value.transient is False


def test_an_image_the_engine_lacks_is_reported_as_the_pulling_step(backend):
    # The backend says where it is through the spec (the deploy's progress is the services').
    steps = []
    agent = FakeAgent()
    # A registry on a closed loopback port: the pull fails at once and nothing leaves the machine.
    spec = spec_for(agent, image="127.0.0.1:9/fleet-test-no-such-image:1", on_step=steps.append)

    with pytest.raises(BackendError):
        backend.create(agent, spec)

    assert steps == ["pulling"]
