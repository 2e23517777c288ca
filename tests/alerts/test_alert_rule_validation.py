"""Every validation failure of a rule is a 400 validation_error naming the field."""

import pytest

from alerts.models import AlertRule
from tests.factories.alerts import make_rule, webhook
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"


def body(**overrides) -> dict:
    base = {"name": "Errors", "eventPattern": "agent.error", "channels": [webhook(HOOK)]}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not ...}


def email(**extra) -> dict:
    return {"type": "email", "to": ["ops@example.com"], **extra}


CASES = [
    ("name missing", body(name=...), "name"),
    ("name blank after trimming", body(name="   "), "name"),
    ("name over 100", body(name="x" * 101), "name"),
    ("pattern missing", body(eventPattern=...), "eventPattern"),
    ("pattern over 100", body(eventPattern="a." * 50 + "b"), "eventPattern"),
    ("pattern malformed", body(eventPattern="agent*"), "eventPattern"),
    ("pattern with a middle glob", body(eventPattern="*.error"), "eventPattern"),
    ("channels missing", body(channels=...), "channels"),
    ("channels empty", body(channels=[]), "channels"),
    ("channels not a list", body(channels={"type": "webhook"}), "channels"),
    ("eleven channels", body(channels=[webhook(HOOK)] * 11), "channels"),
    ("channel not an object", body(channels=["http://127.0.0.1/"]), "channels.0"),
    ("channel type missing", body(channels=[{"url": HOOK}]), "channels.0.type"),
    ("unsupported channel type", body(channels=[{"type": "slack", "url": HOOK}]), "channels.0.type"),
    ("unknown channel field", body(channels=[webhook(HOOK, method="PUT")]), "channels.0.method"),
    ("webhook url missing", body(channels=[{"type": "webhook"}]), "channels.0.url"),
    ("webhook url malformed", body(channels=[webhook("not a url")]), "channels.0.url"),
    ("webhook url not http", body(channels=[webhook("ftp://127.0.0.1/x")]), "channels.0.url"),
    ("webhook url with credentials", body(channels=[webhook("http://u:p@127.0.0.1/x")]), "channels.0.url"),
    ("webhook url to a private address", body(channels=[webhook("http://10.1.2.3/hook")]), "channels.0.url"),
    ("webhook url to link-local metadata", body(channels=[webhook("http://169.254.169.254/latest")]), "channels.0.url"),
    ("webhook url to loopback ::1", body(channels=[webhook("http://[::1]:8080/hook")]), "channels.0.url"),
    ("webhook url too long", body(channels=[webhook("http://127.0.0.1/" + "a" * 2048)]), "channels.0.url"),
    ("headers not an object", body(channels=[webhook(HOOK, headers=["X-A: b"])]), "channels.0.headers"),
    ("header value not a string", body(channels=[webhook(HOOK, headers={"X-A": 1})]), "channels.0.headers.X-A"),
    ("Host header", body(channels=[webhook(HOOK, headers={"Host": "evil"})]), "channels.0.headers.Host"),
    ("hop-by-hop header", body(channels=[webhook(HOOK, headers={"Connection": "close"})]),
     "channels.0.headers.Connection"),
    ("transfer-encoding header", body(channels=[webhook(HOOK, headers={"transfer-encoding": "chunked"})]),
     "channels.0.headers.transfer-encoding"),
    ("signature header", body(channels=[webhook(HOOK, headers={"Webhook-Signature": "v1,x"})]),
     "channels.0.headers.Webhook-Signature"),
    ("header name with a space", body(channels=[webhook(HOOK, headers={"X A": "b"})]), "channels.0.headers.X A"),
    ("header value with a newline", body(channels=[webhook(HOOK, headers={"X-A": "b\r\nX-B: c"})]),
     "channels.0.headers.X-A"),
    ("secret not a string", body(channels=[webhook(HOOK, secret=123)]), "channels.0.secret"),
    ("secret too short", body(channels=[webhook(HOOK, secret="short")]), "channels.0.secret"),
    ("whsec secret not base64", body(channels=[webhook(HOOK, secret="whsec_!!!")]), "channels.0.secret"),
    ("email to missing", body(channels=[{"type": "email"}]), "channels.0.to"),
    ("email to empty", body(channels=[email(to=[])]), "channels.0.to"),
    ("email to a string", body(channels=[email(to="ops@example.com")]), "channels.0.to"),
    ("eleven recipients", body(channels=[email(to=[f"u{i}@example.com" for i in range(11)])]), "channels.0.to"),
    ("invalid recipient", body(channels=[email(to=["ops@example.com", "nope"])]), "channels.0.to.1"),
    ("subject prefix over 60", body(channels=[email(subjectPrefix="p" * 61)]), "channels.0.subjectPrefix"),
    ("subject prefix not a string", body(channels=[email(subjectPrefix=5)]), "channels.0.subjectPrefix"),
    ("second channel bad", body(channels=[webhook(HOOK), email(to=["bad"])]), "channels.1.to.0"),
    ("enabled not a boolean", body(enabled="sometimes"), "enabled"),
]


@pytest.mark.parametrize("case, payload, field", CASES, ids=[c[0] for c in CASES])
def test_create_refuses_invalid_input_naming_the_field(tenancy, case, payload, field):
    response = client_for(tenancy.admin).post(
        f"/api/workspaces/{tenancy.workspace.id}/alert-rules", payload, format="json"
    )

    assert response.status_code == 400, response.json()
    error = response.json()
    assert error["code"] == "validation_error"
    assert field in error["fields"], error
    assert error["error"]
    assert not AlertRule.objects.exists()


# PATCH takes any subset: only the cases where a given field is wrong apply.
PATCH_CASES = [
    c for c in CASES if not c[0].endswith("missing") or c[0].startswith(("webhook", "email", "channel type"))
]


@pytest.mark.parametrize("case, payload, field", PATCH_CASES, ids=[c[0] for c in PATCH_CASES])
def test_patch_refuses_the_same_invalid_fields(tenancy, case, payload, field):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    response = client_for(tenancy.admin).patch(
        f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}", payload, format="json"
    )

    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_ten_channels_and_ten_recipients_are_accepted(tenancy):
    channels = [webhook(f"http://127.0.0.1:{9000 + i}/hook") for i in range(9)]
    channels.append(email(to=[f"u{i}@example.com" for i in range(10)], subjectPrefix="p" * 60))

    response = client_for(tenancy.admin).post(
        f"/api/workspaces/{tenancy.workspace.id}/alert-rules", body(name="n" * 100, channels=channels), format="json"
    )

    assert response.status_code == 200
    assert len(response.json()["channels"]) == 10
