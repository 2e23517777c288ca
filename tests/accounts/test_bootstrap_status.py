import pytest

from tests.factories.accounts import UserFactory

from .conftest import assert_error

URL = "/api/auth/bootstrap-status"
pytestmark = pytest.mark.django_db


def test_it_asks_for_the_first_admin_on_an_empty_selfhosted_install(api_client, selfhosted):
    response = api_client.get(URL)
    assert response.status_code == 200
    assert response.json() == {
        "needsFirstAdmin": True,
        "oauthLoginEnabled": False,
        "platformMode": "selfhosted",
        "signupEnabled": True,
        "signupBotProtection": {
            "enabled": False,
            "provider": "none",
            "siteKey": None,
            "configured": False,
            "configurationError": None,
        },
    }


def test_it_stops_asking_once_a_user_exists(api_client, selfhosted):
    UserFactory()
    assert api_client.get(URL).json()["needsFirstAdmin"] is False


def test_it_never_asks_when_signup_is_disabled(api_client, selfhosted):
    selfhosted.SIGNUP_ENABLED = False
    body = api_client.get(URL).json()
    assert body["needsFirstAdmin"] is False
    assert body["signupEnabled"] is False


def test_paas_never_needs_a_first_admin(api_client, paas):
    paas.SIGNUP_BOT_PROTECTION_PROVIDER = "turnstile"
    paas.TURNSTILE_SITE_KEY = "site-key-public"
    paas.TURNSTILE_SECRET_KEY = "secret-do-not-show"
    body = api_client.get(URL).json()
    assert body["needsFirstAdmin"] is False
    assert body["platformMode"] == "paas"
    assert body["signupBotProtection"] == {
        "enabled": True,
        "provider": "turnstile",
        "siteKey": "site-key-public",
        "configured": True,
        "configurationError": None,
    }


def test_it_never_shows_secrets_counts_or_emails(api_client, selfhosted):
    selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "recaptcha"
    selfhosted.RECAPTCHA_SITE_KEY = "recaptcha-site"
    selfhosted.RECAPTCHA_SECRET_KEY = "recaptcha-secret-value"
    UserFactory(email="someone@example.com")
    text = api_client.get(URL).content.decode()
    assert "recaptcha-secret-value" not in text
    assert "someone@example.com" not in text
    assert "count" not in text.lower()


def test_paas_without_a_provider_reports_a_configuration_error(api_client, paas):
    paas.SIGNUP_BOT_PROTECTION_PROVIDER = "none"
    protection = api_client.get(URL).json()["signupBotProtection"]
    assert protection["configured"] is False
    assert isinstance(protection["configurationError"], str)


def test_a_provider_missing_its_secret_is_reported_and_blocks_the_first_admin_claim(api_client, selfhosted):
    selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "turnstile"
    selfhosted.TURNSTILE_SITE_KEY = "site"
    selfhosted.TURNSTILE_SECRET_KEY = ""
    body = api_client.get(URL).json()
    assert body["needsFirstAdmin"] is False
    assert body["signupBotProtection"]["enabled"] is True
    assert body["signupBotProtection"]["configured"] is False
    assert "TURNSTILE_SECRET_KEY" in body["signupBotProtection"]["configurationError"]


def test_it_reports_oauth_login_when_enabled(api_client, selfhosted):
    selfhosted.OAUTH_LOGIN_ENABLED = True
    assert api_client.get(URL).json()["oauthLoginEnabled"] is True


def test_it_ignores_a_stale_credential(api_client, selfhosted):
    api_client.cookies["service_auth"] = "expired-or-garbage"
    api_client.credentials(HTTP_AUTHORIZATION="Bearer garbage")
    assert api_client.get(URL).status_code == 200


def test_it_refuses_conflicting_credentials(api_client, selfhosted):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer a", HTTP_X_API_KEY="b")
    assert_error(api_client.get(URL), 400, "conflicting_auth")


def test_it_answers_405_to_a_post(api_client, selfhosted):
    assert_error(api_client.post(URL, {}, format="json"), 405)


def test_an_unknown_provider_is_a_configuration_error(api_client, selfhosted):
    selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "hcaptcha"
    body = api_client.get(URL).json()
    assert body["needsFirstAdmin"] is False
    assert body["signupBotProtection"]["configured"] is False
    assert "SIGNUP_BOT_PROTECTION_PROVIDER" in body["signupBotProtection"]["configurationError"]
