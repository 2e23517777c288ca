"""The OpenClaw gateway client against a real OpenClaw 2026.9.6 (one container for the module)."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime

import pytest

from agents.gateway import GatewayAuthRefused, GatewayError, GatewayProtocolError, GatewayUnreachable, gateway_for
from agents.gateway.device import DeviceIdentity, installation_device
from agents.gateway.openclaw import OpenClawGateway, run_sync
from agents.gateway.protocol import ADMIN, APPROVALS, READ
from agents.models import GatewayDevice
from tests.infra.fake_model import ANSWER, USAGE
from tests.infra.runtimes import FAKE_PROVIDER, PRICE_PER_MILLION
from tests.support import wait_until

pytestmark = [pytest.mark.runtime, pytest.mark.django_db]


def _today():
    return datetime.now(UTC).date()


def _raw_call(gateway: OpenClawGateway, scopes: list[str], method: str, params: dict | None = None):
    """One call through a held connection, as the listener makes them."""
    gateway.device  # noqa: B018 - the key is read from the database before the event loop runs

    async def call():
        async with gateway.connection(scopes) as connection:
            return await connection.call(method, params)

    return run_sync(call())


def test_the_handshake_returns_the_runtime_version_with_the_least_scope(openclaw_runtime):
    handshake = gateway_for(openclaw_runtime.agent()).handshake()

    assert (handshake.family, handshake.version, handshake.protocol) == ("openclaw", "2026.9.6", 4)
    assert handshake.version == openclaw_runtime.version
    assert handshake.scopes == ("operator.read",)


def test_the_connect_carries_the_installations_device_signature_and_the_runtime_checks_it(openclaw_runtime):
    gateway = gateway_for(openclaw_runtime.agent())
    assert gateway.handshake().version  # signed with the installation's key: accepted
    device = installation_device()
    assert GatewayDevice.objects.get().device_id == device.device_id

    # The same device id and public key with a signature from another key: the runtime refuses.
    forged = DeviceIdentity(device.device_id, device.public_key, DeviceIdentity.generate().private_key)
    with pytest.raises(GatewayProtocolError) as refused:
        OpenClawGateway(gateway.endpoint, forged).handshake()
    assert refused.value.detail_code == "DEVICE_AUTH_SIGNATURE_INVALID"
    assert refused.value.retryable is False


def test_a_wrong_token_is_an_auth_refusal_that_never_shows_the_token(openclaw_runtime):
    wrong = "Wr0ng-" + openclaw_runtime.token[6:]
    agent = openclaw_runtime.agent(gateway_token=wrong)

    with pytest.raises(GatewayAuthRefused) as refused:
        gateway_for(agent).channels_status()

    assert refused.value.detail_code == "AUTH_TOKEN_MISMATCH"
    assert refused.value.code == "gateway_error"
    assert wrong not in str(refused.value) and openclaw_runtime.token not in str(refused.value)


def test_the_runtimes_refusals_map_to_gateway_errors(openclaw_runtime):
    gateway = gateway_for(openclaw_runtime.agent())

    with pytest.raises(GatewayError) as unknown:
        _raw_call(gateway, [ADMIN], "fleet.no.such.method")
    assert (unknown.value.runtime_code, unknown.value.retryable) == ("INVALID_REQUEST", False)
    assert "unknown method" in str(unknown.value)

    with pytest.raises(GatewayError) as forbidden:
        _raw_call(gateway, [READ], "config.patch", {"raw": "{}"})
    assert (forbidden.value.runtime_code, forbidden.value.detail_code) == ("FORBIDDEN", "MISSING_SCOPE")
    assert not isinstance(forbidden.value, GatewayAuthRefused)  # a scope, not the token


def test_health_and_readiness_over_http(openclaw_runtime):
    gateway = gateway_for(openclaw_runtime.agent())

    assert gateway.health() == {"ok": True, "status": "live"}
    readiness = gateway.ready()
    assert readiness.ready is True and readiness.failing == ()


def test_a_stale_base_hash_is_read_again_once_and_the_patch_is_applied(openclaw_runtime):
    gateway = gateway_for(openclaw_runtime.agent())
    before = gateway.config_get()

    result = gateway.config_patch({"update": {"channel": "beta"}}, base_hash="hmac-sha256:v1:stale")

    assert result["changed_paths"] == ["update.channel"] and result["hash"] != before["hash"]
    after = gateway.config_get()
    assert after["config"]["update"]["channel"] == "beta"
    assert after["hash"] == result["hash"]
    assert after["config"]["models"]["providers"][FAKE_PROVIDER]["apiKey"] == "__OPENCLAW_REDACTED__"


def test_a_chat_turn_then_usage_counts_the_fake_models_tokens_and_price(openclaw_runtime, fake_model):
    gateway = gateway_for(openclaw_runtime.agent())

    reply = gateway.send_message("Say something.", conversation="usage-check")

    assert reply.text == ANSWER
    assert (reply.input_tokens, reply.output_tokens) == (USAGE["prompt_tokens"], USAGE["completion_tokens"])
    assert reply.conversation == "agent:main:fleet:usage-check"
    # OpenClaw's usage figures are eventually consistent: a pull says complete=False until they settle.
    usage = wait_until(lambda: (pulled := gateway.usage(_today())).complete and pulled, timeout=60, interval=1)
    (row,) = [r for r in usage.rows if (r.provider, r.model) == (FAKE_PROVIDER, fake_model.model_id)]
    assert row.day == _today() and row.calls >= 1
    assert (row.input_tokens, row.output_tokens) == (
        USAGE["prompt_tokens"] * row.calls, USAGE["completion_tokens"] * row.calls
    )
    per_call = (
        USAGE["prompt_tokens"] * PRICE_PER_MILLION["input"] + USAGE["completion_tokens"] * PRICE_PER_MILLION["output"]
    ) / 1e6
    assert row.cost_usd == pytest.approx(per_call * row.calls)


def test_abort_runs_ends_a_run_in_progress(openclaw_runtime, fake_model):
    gateway = gateway_for(openclaw_runtime.agent())
    gateway.device  # noqa: B018 - read in this test's transaction, not committed by the thread below
    outcome = {}

    def turn():
        try:
            outcome["reply"] = gateway.send_message("Take your time.", conversation="abort-check", timeout=60)
        except Exception as exc:  # the run ends aborted: what send_message makes of that
            outcome["error"] = exc

    asked = len(fake_model.requests)
    fake_model.hold()
    runner = threading.Thread(target=turn)
    try:
        runner.start()
        fake_model.wait_for(asked + 1)  # the run is waiting on the model now

        aborted = gateway.abort_runs()

        assert aborted == ["agent:main:fleet:abort-check"]
        runner.join(timeout=30)
        assert not runner.is_alive(), "the aborted turn did not end"
    finally:
        fake_model.release()
        runner.join(timeout=30)
    error = outcome.get("error")
    assert isinstance(error, GatewayError), outcome
    assert error.runtime_code == "timeout" and "aborted" in str(error)  # how OpenClaw ends an aborted run
    assert gateway.abort_runs() == []  # nothing is active any more


def test_an_adopted_agent_is_reached_through_the_checked_address(openclaw_runtime, settings):
    # Loopback is refused for adopted agents unless allow-listed; "localhost" may also resolve to
    # ::1, where nothing listens: the client checks every address and dials them in turn.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]
    agent = openclaw_runtime.agent(is_external=True, deploy_target="external", execution_target_id="external",
                                   container_id="", gateway_url=f"http://localhost:{openclaw_runtime.port}")

    assert gateway_for(agent).handshake().version == "2026.9.6"


class HeldConnection:
    """A connection held open on its own loop, as the gateway listener holds one: it receives events."""

    def __init__(self, gateway: OpenClawGateway, scopes: list[str], caps: list[str]):
        self.events: list[dict] = []
        self._opened = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connection = gateway.connection(scopes, caps=caps, on_event=self.events.append)
        self._thread = threading.Thread(target=asyncio.run, args=(self._hold(),), daemon=True)

    async def _hold(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with self._connection:
            self._opened.set()
            await self._stop.wait()

    def __enter__(self) -> HeldConnection:
        self._thread.start()
        assert self._opened.wait(30), "the held connection did not open"
        return self

    def __exit__(self, *exc_info) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def kinds(self) -> list[str]:
        return [event.get("event") for event in list(self.events)]


def test_an_exec_approval_is_listed_and_resolved_while_an_operator_connection_is_held(openclaw_runtime, fake_model):
    gateway = gateway_for(openclaw_runtime.agent())
    gateway.config_patch({"tools": {"exec": {"mode": "ask"}}})  # also reads the device key in this transaction
    # The image has no coreutils: OpenClaw only asks about commands it resolves to a file.
    fake_model.offer_tool_call("node --version")
    outcome = {}

    def turn():
        outcome["reply"] = gateway.send_message("Run the check.", conversation="approval-check", timeout=90)

    runner = threading.Thread(target=turn)
    try:
        # OpenClaw denies an approval at once when no operator client could answer it.
        with HeldConnection(gateway, [ADMIN, APPROVALS], ["approvals", "exec-approvals"]) as held:
            runner.start()
            (pending,) = wait_until(gateway.approvals_list, timeout=60, interval=0.25)
            assert pending.command == "node --version"
            assert "allow-once" in pending.decisions

            gateway.approval_resolve(pending.id, "allow-once")

            runner.join(timeout=60)
            assert "exec.approval.requested" in held.kinds()
    finally:
        gateway.config_patch({"tools": {"exec": {"mode": "full"}}})
        runner.join(timeout=30)
    assert outcome["reply"].text == ANSWER  # the model's answer after the command ran
    assert gateway.approvals_list() == []
    assert fake_model.tool_calls_made == 1


def test_a_config_write_waits_out_a_runtime_restart_and_lands(openclaw_runtime):
    """OpenClaw restarts itself after a change marked `requiresRestart` (a plugin); a
    write sent meanwhile finds the connection refused or dropped. Last in the module: it restarts
    the module's runtime."""
    gateway = gateway_for(openclaw_runtime.agent())
    gateway.timeout = 90  # ready again in about 10 s; more on a machine the suite keeps busy
    gateway.config_get()  # the device key, read before the runtime goes away
    restart = threading.Thread(target=openclaw_runtime.container.restart, kwargs={"timeout": 5})
    restart.start()
    try:
        wait_until(lambda: not gateway_readiness_of(gateway), timeout=30, interval=0.1)

        result = gateway.config_patch({"update": {"channel": "dev"}})

        assert result["changed_paths"] == ["update.channel"]
        assert gateway.config_get()["config"]["update"]["channel"] == "dev"
    finally:
        restart.join(timeout=60)


def gateway_readiness_of(gateway: OpenClawGateway) -> bool:
    try:
        return gateway.ready().ready
    except GatewayUnreachable:
        return False
