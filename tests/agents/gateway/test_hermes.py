"""The Hermes gateway client against a real Hermes 0.19.0 (one container for the module),
and `manage.py gateway_call`, which calls it by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.gateway import GatewayAuthRefused, GatewayError, GatewayUnsupported, gateway_for
from agents.gateway.hermes import session_id_for
from tests.infra.fake_model import ANSWER, USAGE

pytestmark = [pytest.mark.runtime, pytest.mark.django_db]
# Reads what the runtimes hold and adds conversations, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True


def _today():
    return datetime.now(UTC).date()


def test_health_handshake_and_readiness(hermes_runtime):
    gateway = gateway_for(hermes_runtime.agent())

    assert gateway.health() == {"status": "ok", "platform": "hermes-agent", "version": "0.19.0"}
    assert (gateway.handshake().family, gateway.handshake().version) == ("hermes", hermes_runtime.version)
    readiness = gateway.ready()
    assert readiness.ready is True
    assert readiness.failing == ()  # the fake model is configured: no check is degraded


def test_a_request_without_the_key_is_an_auth_refusal(hermes_runtime):
    wrong = "Wr0ng-" + hermes_runtime.token[6:]

    with pytest.raises(GatewayAuthRefused) as refused:
        gateway_for(hermes_runtime.agent(gateway_token=wrong)).handshake()

    assert (refused.value.status, refused.value.runtime_code) == (401, "invalid_api_key")
    assert wrong not in str(refused.value)


def test_chat_turns_continue_one_session_per_conversation_and_usage_counts_them(hermes_runtime, fake_model):
    gateway = gateway_for(hermes_runtime.agent())

    first = gateway.send_message("Hello.", conversation="chan/42")
    second = gateway.send_message("Again.", conversation="chan/42")

    assert first.text == second.text == ANSWER
    assert first.conversation == second.conversation == session_id_for("chan/42") == "fleet-chan-42"
    assert (first.input_tokens, first.output_tokens) == (USAGE["prompt_tokens"], USAGE["completion_tokens"])
    assert len(fake_model.requests[-1]["messages"]) > len(fake_model.requests[-2]["messages"])  # history kept
    (row,) = [r for r in gateway.usage(_today()).rows if r.model == fake_model.model_id]
    assert row.day == _today()
    assert row.calls >= 2 and row.input_tokens == USAGE["prompt_tokens"] * row.calls
    assert row.output_tokens == USAGE["completion_tokens"] * row.calls
    assert row.cost_usd is None  # Hermes has no price for a custom model and says 0.0


def test_usage_since_tomorrow_is_empty(hermes_runtime):
    from datetime import timedelta

    assert gateway_for(hermes_runtime.agent()).usage(_today() + timedelta(days=1)).rows == ()


def test_operations_hermes_lacks_are_unsupported(hermes_runtime):
    gateway = gateway_for(hermes_runtime.agent())

    for operation in (gateway.config_get, gateway.abort_runs, gateway.approvals_list, gateway.exec_policy_get):
        with pytest.raises(GatewayUnsupported) as refused:
            operation()
        assert refused.value.code == "unsupported"


def test_answering_an_approval_of_an_unknown_run_is_the_runtimes_refusal(hermes_runtime):
    with pytest.raises(GatewayError) as refused:
        gateway_for(hermes_runtime.agent()).approval_resolve("run_unknown", "allow-once")

    assert (refused.value.status, refused.value.runtime_code) == (404, "run_not_found")


def test_gateway_call_prints_the_json_result(hermes_runtime):
    agent = hermes_runtime.agent()
    out = StringIO()

    call_command("gateway_call", str(agent.id), "usage", json.dumps({"since": _today().isoformat()}), stdout=out)

    result = json.loads(out.getvalue())
    assert set(result) == {"rows", "complete"}
    assert hermes_runtime.token not in out.getvalue()


def test_gateway_call_prints_a_refusal_without_the_token_and_fails(hermes_runtime):
    wrong = "Wr0ng-" + hermes_runtime.token[6:]
    agent = hermes_runtime.agent(gateway_token=wrong)

    with pytest.raises(CommandError) as failed:
        call_command("gateway_call", str(agent.id), "handshake")

    assert "Invalid API key" in str(failed.value) and "(gateway_error)" in str(failed.value)
    assert wrong not in str(failed.value)
