"""The agent's console page and its views: lifecycle buttons through the services, change
resources (validated as a deploy, applied by a redeploy), deploy from the console, deleting
with the engine down, last_error in the list, deploy progress, the logs (as JSON and followed
live), the chat panel's turns and "Open UI"."""

from __future__ import annotations

import secrets

import pytest
from django.conf import settings as django_settings
from django.test import Client

from agents.backends.engine import backend_of
from agents.deploy_progress import PULLING, deploy_step_set
from agents.models import Agent
from fleet.models import Event
from tests.factories.agents import place_on_engine
from tests.factories.workspaces import make_member
from tests.infra.asgi import edge_stream
from tests.infra.docker import exec_in
from tests.support import client_for, wait_until
from workspaces.roles import Role

pytestmark = pytest.mark.django_db

ENGINE_DOWN = "unix:///nonexistent/fleet-console.sock"


def _page(agent) -> str:
    return f"/admin/agents/agent/{agent.pk}/change/"


def test_the_page_shows_status_with_its_reason_and_the_buttons_its_state_allows(console, tenancy):
    agent = tenancy.agent(status="error", last_error="The runtime did not become ready within 120 s.")

    page = console.get(_page(agent)).content.decode()

    assert 'class="fleet-status fleet-status-error"' in page
    assert "The runtime did not become ready within 120 s." in page
    assert 'id="agent-redeploy"' in page and 'id="agent-stop"' in page
    assert 'id="agent-start"' not in page  # no container to start
    assert "data-confirm=" in page  # destructive buttons ask first
    assert 'id="agent-events"' in page and 'id="agent-budgets"' in page and 'id="agent-logs-panel"' in page


def test_the_stop_button_calls_the_stop_service(console, tenancy):
    agent = tenancy.agent(status="queued")

    response = console.post(f"/admin/agents/agent/{agent.pk}/act/stop/", follow=True)

    assert response.status_code == 200 and f"{agent.name} was stopped." in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).status == "stopped"
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.stopped").exists()


def test_a_refused_button_says_why_and_a_get_changes_nothing(console, tenancy):
    agent = tenancy.agent(status="running")

    refused = console.post(f"/admin/agents/agent/{agent.pk}/act/redeploy/", follow=True)
    fetched = console.get(f"/admin/agents/agent/{agent.pk}/act/stop/")

    assert "Could not redeploy" in refused.content.decode()
    assert fetched.status_code == 405
    assert Agent.objects.get(pk=agent.pk).status == "running"
    assert console.post(f"/admin/agents/agent/{agent.pk}/act/explode/").status_code == 404


def test_resources_are_read_only_on_the_form(console, tenancy):
    agent = tenancy.agent(ram_mb=1024, vcpu=1, name="fixed")
    form = console.get(_page(agent)).content.decode()

    console.post(_page(agent), {"name": "renamed", "owner": agent.owner_id, "ram_mb": 4096, "vcpu": 4,
                                "assignments-TOTAL_FORMS": 0, "assignments-INITIAL_FORMS": 0})

    saved = Agent.objects.get(pk=agent.pk)
    assert 'name="ram_mb"' not in form and 'name="vcpu"' not in form and 'name="runtime_family"' not in form
    assert (saved.ram_mb, saved.vcpu) == (1024, 1)
    assert 'id="agent-resources"' in form  # the explicit way to change them


def test_change_resources_redeploys_through_the_service_and_says_so(console, tenancy):
    agent = tenancy.agent(status="running", ram_mb=1024)

    response = console.post(f"/admin/agents/agent/{agent.pk}/resources/",
                            {"vcpu": 2, "ram_mb": 2048, "disk_gb": 20, "sandbox_profile": "standard"}, follow=True)

    saved = Agent.objects.get(pk=agent.pk)
    assert (saved.vcpu, saved.ram_mb, saved.disk_gb, saved.status) == (2, 2048, 20, "queued")
    assert "being redeployed" in response.content.decode()
    kinds = list(Event.objects.filter(agent_id=agent.pk).order_by("occurred_at").values_list("kind", flat=True))
    assert kinds[-3:] == ["agent.stopped", "agent.resources_changed", "agent.redeployed"]


def test_change_resources_refuses_what_a_deploy_refuses(console, tenancy):
    agent = tenancy.agent(runtime_family="hermes", ram_mb=1024)

    response = console.post(f"/admin/agents/agent/{agent.pk}/resources/",
                            {"vcpu": 1, "ram_mb": 2048, "disk_gb": 10, "sandbox_profile": "nemoclaw"})

    assert response.status_code == 200
    page = response.content.decode()
    assert "nemoclaw" in page and ("not enabled" in page or "only the standard profile" in page)
    assert Agent.objects.get(pk=agent.pk).ram_mb == 1024


def test_deploying_from_the_console_uses_the_deploy_service(console, tenancy):
    response = console.post("/admin/agents/agent/add/", {"name": "from-console", "runtime_family": "hermes",
                                                         "ram_mb": "512"})

    agent = Agent.objects.get(name="from-console")
    assert response.status_code == 302 and response["Location"] == _page(agent)
    assert (agent.status, agent.runtime_family, agent.ram_mb) == ("queued", "hermes", 512)
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.queued").exists()


def test_deploying_into_a_workspace_shares_the_agent_there_as_it_is_queued(console, tenancy, platform_admin):
    make_member(tenancy.workspace, Role.EDITOR, user=platform_admin)
    form = console.get("/admin/agents/agent/add/").content.decode()
    assert f'value="{tenancy.workspace.pk}"' in form and tenancy.workspace.name in form

    response = console.post("/admin/agents/agent/add/", {"name": "shared-one", "runtime_family": "hermes",
                                                         "workspace": str(tenancy.workspace.pk)}, follow=True)

    agent = Agent.objects.get(name="shared-one")
    assert f"shared into {tenancy.workspace.name}" in response.content.decode()
    assert (agent.owner_id, agent.status) == (platform_admin.pk, "queued")
    assert list(agent.assignments.values_list("workspace_id", flat=True)) == [tenancy.workspace.pk]
    assert client_for(tenancy.viewer).get(f"/api/agents/{agent.pk}").status_code == 200  # its members see it


def test_a_workspace_not_offered_is_refused_and_nothing_is_queued(console):
    response = console.post("/admin/agents/agent/add/", {"name": "not-shared",
                                                         "workspace": "00000000-0000-0000-0000-000000000000"})

    assert response.status_code == 200
    assert "Select a valid choice. 00000000-0000-0000-0000-000000000000 is not one" in response.content.decode()
    assert not Agent.objects.filter(name="not-shared").exists()


def test_deploying_from_the_console_shows_the_apis_validation_errors(console):
    response = console.post("/admin/agents/agent/add/", {"name": "x" * 200, "deploy_target": "proxmox"})

    page = response.content.decode()
    assert response.status_code == 200
    assert "no more than" in page or "not available" in page
    assert not Agent.objects.exists()


def test_deleting_with_the_engine_down_keeps_the_agent_and_says_why(console, tenancy, settings):
    settings.DOCKER_HOST = ENGINE_DOWN
    agent = tenancy.agent(status="running", container_id="c0ffee")

    response = console.post(f"/admin/agents/agent/{agent.pk}/delete/", {"post": "yes"}, follow=True)

    assert response.status_code == 200
    assert "Could not delete the agent" in response.content.decode()
    assert Agent.objects.filter(pk=agent.pk).exists()


def test_bulk_deleting_with_the_engine_down_is_reported_not_raised(console, tenancy, settings):
    settings.DOCKER_HOST = ENGINE_DOWN
    agent = tenancy.agent(status="running", container_id="c0ffee")

    response = console.post("/admin/agents/agent/", {"action": "delete_selected", "post": "yes",
                                                     "_selected_action": [str(agent.pk)]}, follow=True)

    page = response.content.decode()
    assert response.status_code == 200 and "Could not delete" in page and "Successfully deleted" not in page
    assert Agent.objects.filter(pk=agent.pk).exists()


def test_the_list_shows_the_reason(console, tenancy):
    tenancy.agent(status="warning", last_error="The container engine could not be reached.")

    page = console.get("/admin/agents/agent/").content.decode()

    assert "The container engine could not be reached." in page


def test_a_deploying_agent_shows_its_progress(console, tenancy):
    agent = tenancy.agent(status="deploying")
    deploy_step_set(agent.pk, PULLING)

    page = console.get(_page(agent)).content.decode()
    progress = console.get(f"/admin/agents/agent/{agent.pk}/progress/").json()

    assert 'id="agent-progress"' in page and 'class="fleet-step-now" data-step="pulling"' in page
    assert progress["status"] == "deploying"
    assert [s["state"] for s in progress["steps"]][:4] == ["done", "done", "now", "todo"]


def test_the_logs_of_an_agent_without_a_workload_are_the_apis_409_and_a_bad_query_its_400(console, tenancy):
    agent = tenancy.agent(container_id="")

    response = console.get(f"/admin/agents/agent/{agent.pk}/logs/")
    bad = console.get(f"/admin/agents/agent/{agent.pk}/logs/?tail=x&since=yesterday")

    assert (response.status_code, response.json()["code"]) == (409, "no_container")
    assert "no workload" in response.json()["error"]
    assert bad.status_code == 400 and bad.json()["code"] == "validation_error"
    assert set(bad.json()["fields"]) == {"tail", "since"}
    assert console.post(f"/admin/agents/agent/{agent.pk}/logs/").status_code == 405
    assert console.get("/admin/agents/agent/00000000-0000-0000-0000-000000000000/logs/").status_code == 404


def test_the_logs_with_the_engine_down_are_the_apis_502(console, tenancy, settings):
    settings.DOCKER_HOST = ENGINE_DOWN
    agent = tenancy.agent(status="running", container_id="c0ffee")

    response = console.get(f"/admin/agents/agent/{agent.pk}/logs/")

    assert (response.status_code, response.json()["code"]) == (502, "daemon_unreachable")


@pytest.mark.docker
def test_the_logs_the_page_polls_come_from_the_container_and_since_includes_its_instant(
        console, tenancy, docker_settings, docker_engine):
    agent = place_on_engine(tenancy.agent(name="polled"))
    try:
        container = docker_engine.containers.get(agent.container_id)
        assert exec_in(container, ["sh", "-c", "echo polled-first > /proc/1/fd/1"]).exit_code == 0
        first = console.get(f"/admin/agents/agent/{agent.pk}/logs/?tail=200")
        last = first.json()["lines"][-1]
        assert exec_in(container, ["sh", "-c", "echo polled-second > /proc/1/fd/1"]).exit_code == 0
        wait_until(lambda: "polled-second" in _lines(console, agent, last["ts"]), timeout=10)
        after = console.get(f"/admin/agents/agent/{agent.pk}/logs/", {"tail": 1000, "since": last["ts"]})
    finally:
        backend_of(agent).remove(agent)

    assert first.status_code == 200 and "no-store" in first["Cache-Control"]  # the admin's never_cache
    assert first.json()["status"] == "running"
    assert last == {"ts": last["ts"], "stream": "stdout", "line": "polled-first"}
    # `since` is the last line's ts, inclusive: that line comes again (the page drops it), then the new one.
    assert [row["line"] for row in after.json()["lines"]] == ["polled-first", "polled-second"]


def _lines(console, agent, since: str) -> list[str]:
    response = console.get(f"/admin/agents/agent/{agent.pk}/logs/", {"tail": 1000, "since": since})
    return [row["line"] for row in response.json()["lines"]]


def test_the_console_views_are_for_platform_admins_only(tenancy):
    agent = tenancy.agent(status="queued")
    client = Client()
    client.force_login(tenancy.agent_owner)

    for url in (f"/admin/agents/agent/{agent.pk}/act/stop/", f"/admin/agents/agent/{agent.pk}/resources/",
                f"/admin/agents/agent/{agent.pk}/logs/", f"/admin/agents/agent/{agent.pk}/chat/",
                f"/admin/agents/agent/{agent.pk}/open-ui/", "/admin/agents/agent/add/"):
        for response in (client.post(url), client.get(url)):
            assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert Agent.objects.get(pk=agent.pk).status == "queued"


def test_deleting_from_the_console_goes_through_the_service(console, tenancy):
    agent = tenancy.agent(status="stopped", container_id="")

    response = console.post("/admin/agents/agent/", {"action": "delete_selected", "post": "yes",
                                                     "_selected_action": [str(agent.pk)]}, follow=True)

    assert "Successfully deleted 1" in response.content.decode()
    assert not Agent.objects.filter(pk=agent.pk).exists()
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.deleted").exists()


def test_open_ui_sends_the_operator_into_the_agents_own_origin(console, tenancy, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    serving = tenancy.agent(status="running", is_external=True, deploy_target="external",
                            execution_target_id="external", gateway_url="http://127.0.0.1:18789",
                            gateway_token=secrets.token_urlsafe(32))
    stopped = tenancy.agent()

    page = console.get(_page(serving)).content.decode()
    opened = console.post(f"/admin/agents/agent/{serving.pk}/open-ui/")
    refused = console.post(f"/admin/agents/agent/{stopped.pk}/open-ui/", follow=True)

    assert 'id="agent-open-ui"' in page and 'id="agent-chat-panel"' in page
    assert 'id="agent-open-ui"' not in console.get(_page(stopped)).content.decode()
    assert opened.status_code == 302
    assert opened["Location"].startswith(f"http://{serving.pk}.gw.localhost:8000/__fleet__/session?ticket=")
    assert "Could not open" in refused.content.decode() and "not running" in refused.content.decode()
    assert console.get(f"/admin/agents/agent/{serving.pk}/open-ui/").status_code == 405


def test_a_chat_turn_from_the_console_is_validated_and_refused_like_the_apis(console, tenancy):
    stopped = tenancy.agent()
    url = f"/admin/agents/agent/{stopped.pk}/chat/"

    empty = console.post(url, data="{}", content_type="application/json")
    garbled = console.post(url, data="not json", content_type="application/json")
    to_stopped = console.post(url, data='{"message": "hi"}', content_type="application/json")

    assert (empty.status_code, empty.json()["code"]) == (400, "validation_error")
    assert "message" in empty.json()["fields"]
    assert garbled.status_code == 400
    # The test client is no edge: a stream would be read whole before answering.
    assert (to_stopped.status_code, to_stopped.json()["code"]) == (409, "streams_unavailable")
    assert console.get(url).status_code == 405


@pytest.mark.docker
@pytest.mark.django_db(transaction=True)
def test_the_page_follows_the_logs_live_through_the_edge(tenancy, platform_admin, docker_settings, docker_engine):
    agent = place_on_engine(tenancy.agent(name="followed"))
    client = Client()
    client.force_login(platform_admin)
    cookie = f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}"
    try:
        with edge_stream("GET", f"/admin/agents/agent/{agent.pk}/logs/?tail=0",
                         headers={"cookie": cookie, "accept": "text/event-stream"}) as stream:
            assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream"
            stream.read_until(b"retry:")
            container = docker_engine.containers.get(agent.container_id)
            assert exec_in(container, ["sh", "-c", "echo followed-line > /proc/1/fd/1"]).exit_code == 0
            assert b"followed-line" in stream.read_until(b"followed-line")
    finally:
        backend_of(agent).remove(agent)
