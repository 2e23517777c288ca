"""The nemoclaw profile on a real OpenClaw 2026.9.6 (one container for the module), its model
the loopback fake reached through the NVIDIA provider config, the gateway listener in a thread
and a real Celery worker: a policy really decides whether the agent's command runs, waits for an
operator, or is refused, and a policy stored while the agent is stopped arrives when it starts.

The image has no coreutils: OpenClaw only asks about commands that resolve to a file, so the
agent runs `node`. The stop/start test comes last: it restarts the module's container.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid

import pytest
from django.db import connections

from agents.gateway import gateway_for
from fleet.models import Event
from llm.services import own_key_set
from sandbox.models import SandboxApproval
from tests.factories.alerts import make_rule, webhook
from tests.infra.fake_model import ANSWER
from tests.support import client_for, wait_until

from .conftest import assign

pytestmark = [pytest.mark.runtime, pytest.mark.django_db(transaction=True)]

# Prints 42000000: an output no approval id, hash or time in a denial message can contain by chance.
COMMAND = "node -p 41000000+1000000"
OUTPUT = "42000000"
NVIDIA_KEY = "nvapi-test-" + "k" * 24


@pytest.fixture
def sandbox(openclaw_runtime, fake_model, tenancy, settings):
    """A running nemoclaw agent on the module's runtime, owned in the tenancy, its NVIDIA model
    pointed at the fake."""
    settings.NVIDIA_BASE_URL = fake_model.base_url
    settings.SANDBOX_APPLY_RETRY_BACKOFF_SECONDS = 0.5
    own_key_set(user=tenancy.agent_owner, provider="nvidia", api_key=NVIDIA_KEY)
    agent = assign(tenancy, openclaw_runtime.agent(name=f"sbx-{uuid.uuid4().hex[:6]}", owner=tenancy.agent_owner,
                                                   sandbox_profile="nemoclaw"))
    fake_model.clear()
    return agent


@pytest.fixture
def operator(tenancy):
    return client_for(tenancy.editor)


def url(agent, tail: str) -> str:
    return f"/api/agents/{agent.id}/nemoclaw/{tail}"


def post_policy(client, agent, **document):
    response = client.post(url(agent, "policy"), document, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _held(listener, agent):
    return wait_until(lambda: (link := listener.link(agent.pk)) is not None and link.connected and link,
                      timeout=30, interval=0.05)


class Turn:
    """One agent turn in a thread: send_message waits while the command waits for an operator."""

    def __init__(self, agent):
        self.outcome: dict = {}
        gateway = gateway_for(agent)
        conversation = f"sbx-{uuid.uuid4().hex[:8]}"
        self.thread = threading.Thread(target=self._run, args=(gateway, conversation), daemon=True)
        self.thread.start()

    def _run(self, gateway, conversation) -> None:
        try:
            self.outcome["reply"] = gateway.send_message("Run the check.", conversation=conversation, timeout=90)
        except Exception as exc:  # shown by the assertion below
            self.outcome["error"] = exc
        finally:
            connections.close_all()  # this thread read the device key: leave no connection behind

    def reply(self):
        self.thread.join(timeout=100)
        assert "error" not in self.outcome, self.outcome.get("error")
        return self.outcome["reply"]


def tool_results(fake_model) -> list[str]:
    """What the runtime told the model its exec tool gave (the transcript's tool messages)."""
    texts = []
    for request in fake_model.requests:
        for message in request.get("messages") or []:
            if message.get("role") == "tool":
                content = message.get("content")
                texts.append(content if isinstance(content, str) else str(content))
    return texts


def test_policy_ask_waits_for_an_operator_alerts_by_webhook_and_approve_runs_the_command(
        sandbox, operator, tenancy, settings, fake_model, running_listener, http_receiver, celery_worker_live):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]  # the receiver is on loopback, which alerts refuse
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))], pattern="sandbox.*")
    body = post_policy(operator, sandbox, exec={"mode": "ask", "allow": []})
    assert (body["version"], body["applied"], body["policy"]["exec"]["mode"]) == (2, True, "ask")

    with running_listener() as listener:
        _held(listener, sandbox)
        fake_model.offer_tool_call(COMMAND)
        turn = Turn(sandbox)

        pending = wait_until(lambda: operator.get(url(sandbox, "approvals")).json(), timeout=30, interval=0.2)
        (approval,) = pending
        assert approval["command"] == COMMAND and approval["status"] == "pending"
        assert "allow-once" in approval["allowedDecisions"]
        (delivery,) = http_receiver.wait_for(1, timeout=30)
        delivered = delivery.json()
        assert (delivered["type"], delivered["agent"]["id"]) == ("sandbox.approval_requested", str(sandbox.id))
        assert (delivered["data"]["requestId"], delivered["data"]["command"]) == (approval["id"], COMMAND)
        assert operator.get(url(sandbox, "status")).json()["pendingApprovals"] == 1

        decided = operator.post(url(sandbox, f"approvals/{approval['id']}"), {"decision": "approve"}, format="json")

        assert decided.status_code == 200, decided.content
        assert (decided.json()["status"], decided.json()["decidedBy"]) == ("approved", str(tenancy.editor.id))
        assert turn.reply().text == ANSWER
    assert any(OUTPUT in text for text in tool_results(fake_model)), tool_results(fake_model)
    assert fake_model.requests[0]["model"].endswith("nemotron-3-super-120b-a12b")  # the NVIDIA provider's model
    assert operator.get(url(sandbox, "approvals")).json() == []
    again = operator.post(url(sandbox, f"approvals/{approval['id']}"), {"decision": "deny"}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "approval_decided")


def test_deny_makes_the_runtime_report_the_command_denied(sandbox, operator, fake_model, running_listener):
    post_policy(operator, sandbox, exec={"mode": "ask", "allow": []})

    with running_listener() as listener:
        _held(listener, sandbox)
        fake_model.offer_tool_call(COMMAND)
        turn = Turn(sandbox)
        (approval,) = wait_until(lambda: operator.get(url(sandbox, "approvals")).json(), timeout=30, interval=0.2)

        decided = operator.post(url(sandbox, f"approvals/{approval['id']}"), {"decision": "deny"}, format="json")

        assert (decided.status_code, decided.json()["status"]) == (200, "denied")
        turn.reply()
    results = tool_results(fake_model)
    assert any("denied" in text.lower() for text in results), results
    assert not any(OUTPUT in text for text in results), results
    assert SandboxApproval.objects.get(request_id=approval["id"]).runtime_decision == "deny"


def test_policy_deny_runs_no_command_and_asks_no_one(sandbox, operator, fake_model, running_listener):
    post_policy(operator, sandbox, exec={"mode": "deny", "allow": []})

    with running_listener() as listener:
        _held(listener, sandbox)
        fake_model.offer_tool_call(COMMAND)
        Turn(sandbox).reply()

    assert not any(OUTPUT in text for text in tool_results(fake_model)), tool_results(fake_model)
    assert not SandboxApproval.objects.filter(agent=sandbox).exists()
    effective = gateway_for(sandbox).exec_policy_get()["effective_defaults"]
    assert effective["security"] == "deny"


def test_an_allowlisted_command_runs_without_asking(sandbox, operator, fake_model, running_listener):
    body = post_policy(operator, sandbox, exec={"mode": "ask", "allow": [{"pattern": "node"}]})
    assert body["applied"] is True

    with running_listener() as listener:
        _held(listener, sandbox)
        fake_model.offer_tool_call(COMMAND)
        assert Turn(sandbox).reply().text == ANSWER

    assert any(OUTPUT in text for text in tool_results(fake_model)), tool_results(fake_model)
    assert not SandboxApproval.objects.filter(agent=sandbox).exists()


def test_the_status_of_a_running_sandbox_reports_the_runtime_and_the_key_went_only_to_its_model_config(
        sandbox, operator, openclaw_runtime, caplog):
    with caplog.at_level(logging.DEBUG):
        body = post_policy(operator, sandbox, exec={"mode": "allowlist",
                                                    "allow": [{"pattern": "node", "argPattern": "^-p"}]})
    assert body["applied"] is True
    providers = gateway_for(sandbox).config_get()["config"]["models"]["providers"]
    assert providers["nvidia"]["apiKey"] == "__OPENCLAW_REDACTED__"  # set, and the runtime keeps it secret
    assert NVIDIA_KEY not in caplog.text
    assert not any(NVIDIA_KEY in json.dumps(event.data) for event in Event.objects.all())

    status = operator.get(url(sandbox, "status")).json()

    assert status["runtime"]["version"] == openclaw_runtime.version
    assert status["runtime"]["exec"]["security"] == "allowlist"
    assert (status["policyApplied"], status["inferenceConfigured"], status["agentStatus"]) == (True, True, "running")


def test_a_policy_posted_to_a_stopped_agent_is_applied_when_it_starts(
        sandbox, operator, openclaw_runtime, docker_settings, celery_worker_live):
    sandbox.container_id = openclaw_runtime.container.id
    sandbox.save(update_fields=["container_id"])
    assert operator.post(f"/api/agents/{sandbox.id}/stop").status_code == 200

    body = post_policy(operator, sandbox, exec={"mode": "deny", "allow": []}, tools={"profile": "minimal"})
    assert body["applied"] is False
    assert operator.get(url(sandbox, "status")).json()["runtime"] is None

    assert operator.post(f"/api/agents/{sandbox.id}/start").status_code == 200

    applied = wait_until(lambda: (b := operator.get(url(sandbox, "policy")).json())["applied"] and b,
                         timeout=90, interval=0.5)
    assert applied["version"] == body["version"]
    sandbox.refresh_from_db()
    gateway = gateway_for(sandbox)
    assert gateway.exec_policy_get()["effective_defaults"]["security"] == "deny"
    assert gateway.config_get()["config"]["tools"]["profile"] == "minimal"
