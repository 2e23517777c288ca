"""Defects 5, 7 and 13: the admin login, the alert-rule test route and member adds are
throttled (429 with Retry-After), per the settings' rates. A legacy channel's
test route relays mail too, and goes through the alert test's one rule (per tested thing, per
user across both routes, recipients per hour)."""

from __future__ import annotations

import pytest

from channels.services import legacy_channel_create
from tests.factories.accounts import UserFactory
from tests.factories.alerts import make_rule

pytestmark = pytest.mark.django_db


def assert_throttled(response):
    assert response.status_code == 429, response.content
    assert int(response["Retry-After"]) >= 1


class TestAdminLogin:
    def test_it_is_throttled_per_ip(self, client, settings):
        settings.ADMIN_LOGIN_RATE_PER_IP = "3/15m"
        for n in range(3):
            assert client.post("/admin/login/", {"username": f"u{n}@x.co", "password": "bad"}).status_code == 200

        assert_throttled(client.post("/admin/login/", {"username": "u9@x.co", "password": "bad"}))

    def test_it_is_throttled_per_account_whatever_the_ip(self, client, settings):
        settings.ADMIN_LOGIN_RATE_PER_ACCOUNT = "2/15m"
        for n in range(2):
            client.post("/admin/login/", {"username": "Victim@x.co", "password": "bad"}, REMOTE_ADDR=f"10.0.0.{n}")

        assert_throttled(client.post("/admin/login/", {"username": "victim@x.co", "password": "right"},
                                     REMOTE_ADDR="10.0.0.9"))

    def test_a_throttled_attempt_does_not_sign_in_even_with_the_right_password(self, client, settings):
        settings.ADMIN_LOGIN_RATE_PER_IP = "1/15m"
        admin = UserFactory(role="admin", password="right-password")
        client.post("/admin/login/", {"username": "x@x.co", "password": "bad"})

        response = client.post("/admin/login/", {"username": admin.email, "password": "right-password"})

        assert_throttled(response)
        assert "_auth_user_id" not in client.session

    def test_the_login_page_itself_is_not_counted(self, client, settings):
        settings.ADMIN_LOGIN_RATE_PER_IP = "1/15m"
        for _ in range(3):
            assert client.get("/admin/login/").status_code == 200


class TestAlertRuleTest:
    def url(self, tenancy, rule):
        return f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test"

    def test_it_is_throttled_per_rule(self, tenancy, settings):
        settings.ALERT_TEST_RATE_PER_RULE = "2/10m"
        rule = make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["a@x.co"]}])
        for caller in ("owner", "admin"):
            assert tenancy.client(caller).post(self.url(tenancy, rule)).status_code == 200

        assert_throttled(tenancy.client("platform_admin").post(self.url(tenancy, rule)))

    def test_it_is_throttled_per_user(self, tenancy, settings):
        settings.ALERT_TEST_RATE_PER_USER = "2/1h"
        rules = [make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["a@x.co"]}])
                 for _ in range(3)]
        client = tenancy.client("owner")
        for rule in rules[:2]:
            assert client.post(self.url(tenancy, rule)).status_code == 200

        assert_throttled(client.post(self.url(tenancy, rules[2])))

    def test_recipients_per_workspace_and_hour_are_capped(self, tenancy, settings):
        settings.ALERT_TEST_RECIPIENTS_PER_HOUR = 12
        to = [f"r{n}@x.co" for n in range(10)]
        first = make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": to}])
        second = make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": to[:5]}])

        assert tenancy.client("owner").post(self.url(tenancy, first)).status_code == 200
        assert_throttled(tenancy.client("admin").post(self.url(tenancy, second)))


class TestChannelTest:
    """The relay found by the review: an email channel with ten arbitrary addresses and a
    phishing subject prefix, tested twelve times, sent twelve mails."""

    PHISH = {"to": [f"victim{n}@example.com" for n in range(10)], "subjectPrefix": "[Your bank] Verify now:"}

    def url(self, channel):
        return f"/api/agents/{channel.agent_id}/channels/{channel.pk}/test"

    def email_channel(self, tenancy, config=None):
        return legacy_channel_create(agent=tenancy.agent(runtime_family="hermes"), type_="email",
                                     config=config or self.PHISH)

    def test_twelve_tests_of_an_email_channel_send_five_mails(self, tenancy, smtp_server):
        channel = self.email_channel(tenancy)
        client = tenancy.client("editor")

        answers = [client.post(self.url(channel)).status_code for _ in range(12)]

        assert answers == [200] * 5 + [429] * 7
        assert len(smtp_server.messages) == 5
        assert all(len(mail.rcpt_tos) == 10 for mail in smtp_server.messages)

    def test_recipients_per_hour_are_capped_across_the_owners_channels(self, tenancy, settings, smtp_server):
        settings.ALERT_TEST_RECIPIENTS_PER_HOUR = 12
        first = self.email_channel(tenancy)
        second = legacy_channel_create(agent=first.agent, type_="email", config={"to": self.PHISH["to"][:5]})

        assert tenancy.client("editor").post(self.url(first)).status_code == 200
        assert_throttled(tenancy.client("owner").post(self.url(second)))
        assert len(smtp_server.messages) == 1

    def test_one_per_user_budget_covers_alert_and_channel_tests(self, tenancy, settings, smtp_server):
        settings.ALERT_TEST_RATE_PER_USER = "2/1h"
        rule = make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["a@x.co"]}])
        channels = [self.email_channel(tenancy, {"to": ["b@x.co"]}) for _ in range(2)]
        client = tenancy.client("owner")

        assert client.post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test").status_code == 200
        assert client.post(self.url(channels[0])).status_code == 200
        assert_throttled(client.post(self.url(channels[1])))

    def test_every_type_is_counted_not_only_email(self, tenancy, settings, http_receiver):
        settings.ALERT_TEST_RATE_PER_RULE = "1/10m"
        hook = legacy_channel_create(agent=tenancy.agent(runtime_family="hermes"), type_="webhook",
                                     config={"url": http_receiver.url_for("/hook")})
        client = tenancy.client("editor")

        assert client.post(self.url(hook)).json() == {"success": True}
        assert_throttled(client.post(self.url(hook)))
        assert len(http_receiver.requests) == 1


class TestMemberAdd:
    def url(self, tenancy):
        return f"/api/workspaces/{tenancy.workspace.id}/members"

    def test_probing_emails_is_throttled_per_user(self, tenancy, settings):
        settings.MEMBER_ADD_RATE_PER_USER = "3/1h"
        client = tenancy.client("owner")
        for n in range(3):
            assert client.post(self.url(tenancy), {"email": f"nobody{n}@x.co", "role": "viewer"},
                               format="json").status_code == 202

        assert_throttled(client.post(self.url(tenancy), {"email": "probe@x.co", "role": "viewer"}, format="json"))

    def test_it_is_throttled_per_workspace(self, tenancy, settings):
        settings.MEMBER_ADD_RATE_PER_WORKSPACE = "2/1h"
        tenancy.client("owner").post(self.url(tenancy), {"email": "a@x.co", "role": "viewer"}, format="json")
        tenancy.client("admin").post(self.url(tenancy), {"email": "b@x.co", "role": "viewer"}, format="json")

        response = tenancy.client("platform_admin").post(self.url(tenancy), {"email": "c@x.co", "role": "viewer"},
                                                         format="json")

        assert_throttled(response)
        assert response.json()["code"] == "rate_limited"

    def test_listing_members_is_not_counted(self, tenancy, settings):
        settings.MEMBER_ADD_RATE_PER_USER = "1/1h"
        for _ in range(3):
            assert tenancy.client("owner").get(self.url(tenancy)).status_code == 200
