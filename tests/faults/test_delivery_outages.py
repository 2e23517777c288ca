"""The webhook receiver and the mail server down, then up, under the Procfile's `web` and
`delivery` processes (docs/reliability.md). A workspace's alert rule sends `agent.queued` to a
signed webhook and to an email address; deploys through the API with the workspace's key queue
agents (no provision worker runs: they stay queued, which is all the events need). Both servers
are down for longer than two retry steps (ALERT_RETRY_DELAYS_SECONDS, shortened): every
delivery fails its first three attempts. Once both are back on the same ports, every webhook
delivery arrives exactly once under its own delivery id with a valid Standard Webhooks
signature, every mail arrives once, and within a bound."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections import Counter

import pytest
import requests

from accounts.tokens import session_token_issue
from alerts.models import Delivery, DeliveryAttempt, DeliveryStatus
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.faults.stack import private_stack, wait_for
from tests.infra.http import HttpReceiver
from tests.infra.smtp import SmtpServer
from tests.infra.web_server import procfile_web_server

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DEPLOYS = 3
RETRY_STEPS = (1, 2, 3, 3, 3)  # seconds before each retry: attempts at 0, 1, 3, 6, 9, 12 s
FAILED_BEFORE_BACK = 3  # the first attempt and two retries fail: down for longer than two steps
RECOVERY_BOUND = 10  # seconds from the servers back to every delivery succeeded (the next step is 3 s)
NO_ENGINE = "unix:///nonexistent/docker.sock"  # nothing here is provisioned


def _signature_valid(secret: str, request) -> bool:
    """Standard Webhooks: v1,base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")), the key being
    the base64 after "whsec_" (written here from the spec, not from alerts.signing)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{request.header('webhook-id')}.{request.header('webhook-timestamp')}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [part.removeprefix("v1,") for part in request.header("webhook-signature", "").split()
             if part.startswith("v1,")]
    return any(hmac.compare_digest(expected, candidate) for candidate in given)


def _attempts_failed(channel_type: str) -> list[int]:
    """Per delivery of the channel type: how many of its attempts failed."""
    failed = Counter(DeliveryAttempt.objects.filter(delivery__channel_type=channel_type, succeeded=False)
                     .values_list("delivery_id", flat=True))
    return [failed[pk] for pk in Delivery.objects.filter(channel_type=channel_type).values_list("pk", flat=True)]


def test_webhook_receiver_and_smtp_down_then_up(tmp_path):
    workspace = WorkspaceFactory()
    owner_auth = {"Authorization": f"Bearer {session_token_issue(user=workspace.owner)}"}
    _, key = make_api_key(workspace=workspace, scopes=("agents:read", "agents:write"))
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    receiver, mail = HttpReceiver().start(), SmtpServer().start()
    env = {
        "ALERT_RETRY_DELAYS_SECONDS": ",".join(map(str, RETRY_STEPS)),
        "OUTBOUND_ALLOWED_HOSTS": "127.0.0.1",
        "EMAIL_URL": f"smtp://127.0.0.1:{mail.port}",
    }
    try:
        with private_stack(tmp_path, NO_ENGINE, env=env) as stack, \
                procfile_web_server(tmp_path, env=stack.env) as web:
            stack.worker("delivery")
            rule = requests.post(f"{web}/api/workspaces/{workspace.pk}/alert-rules", headers=owner_auth, timeout=30,
                                 json={"name": "Queued", "eventPattern": "agent.queued", "channels": [
                                     {"type": "webhook", "url": receiver.url_for("/hook"), "secret": secret},
                                     {"type": "email", "to": ["ops@example.com"]}]})
            assert rule.status_code == 200, rule.text[:500]

            receiver.stop()
            mail.stop()
            for n in range(DEPLOYS):
                deployed = requests.post(f"{web}/api/agents/deploy", json={"name": f"outage-{n}"},
                                         headers={"X-Api-Key": key}, timeout=30)
                assert deployed.status_code == 201, deployed.text[:500]

            def each_failed_enough():
                counts = _attempts_failed("webhook") + _attempts_failed("email")
                return len(counts) == 2 * DEPLOYS and min(counts) >= FAILED_BEFORE_BACK

            wait_for(each_failed_enough, timeout=30, what="every delivery failing three attempts", stack=stack)
            assert receiver.requests == [] and mail.messages == []  # nothing got through while down
            receiver.start()
            mail.start()
            back = time.monotonic()

            wait_for(lambda: not Delivery.objects.exclude(status=DeliveryStatus.SUCCEEDED).exists(),
                     timeout=RECOVERY_BOUND, what="every delivery succeeded", stack=stack)
            recovered = time.monotonic() - back
            time.sleep(max(RETRY_STEPS))  # a duplicate attempt would arrive within a step

        webhooks = Delivery.objects.filter(channel_type="webhook")
        received = receiver.requests
        assert Counter(r.header("webhook-id") for r in received) == Counter({str(d.pk): 1 for d in webhooks})
        assert all(_signature_valid(secret, r) for r in received), [r.headers for r in received]
        assert sorted(r.json()["agent"]["name"] for r in received) == [f"outage-{n}" for n in range(DEPLOYS)]
        messages = mail.messages
        assert len(messages) == DEPLOYS, [m.subject for m in messages]
        assert sorted(re.search(r"Agent (\S+) was queued", m.subject)[1] for m in messages) == \
            [f"outage-{n}" for n in range(DEPLOYS)], [m.subject for m in messages]
        assert all(m.rcpt_tos == ["ops@example.com"] for m in messages)
        assert Delivery.objects.count() == 2 * DEPLOYS  # one per event and channel
        assert set(Delivery.objects.values_list("attempts", flat=True)) <= {FAILED_BEFORE_BACK + 1,
                                                                             FAILED_BEFORE_BACK + 2}
        assert recovered < RECOVERY_BOUND
    finally:
        receiver.stop()
        mail.stop()
