from urllib.parse import parse_qs

import pytest

from accounts.models import User
from tests.factories.accounts import UserFactory

from .conftest import Reply, assert_error

URL = "/api/auth/signup"
PASSWORD = "a good password"
pytestmark = pytest.mark.django_db


def signup(client, email="new@example.com", password=PASSWORD, **extra):
    return client.post(URL, {"email": email, "password": password, **extra}, format="json")


def test_the_first_user_of_an_empty_selfhosted_install_becomes_platform_admin(api_client, selfhosted):
    response = signup(api_client)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "email"}
    user = User.objects.get(pk=body["id"])
    assert body["email"] == "new@example.com"
    assert user.role == "admin"
    assert user.check_password(PASSWORD)
    assert user.provider is None


def test_later_users_are_regular_users(api_client, selfhosted):
    UserFactory()
    body = signup(api_client).json()
    assert User.objects.get(pk=body["id"]).role == "user"


def test_paas_always_creates_regular_users(api_client, paas, http_receiver):
    paas.SIGNUP_BOT_PROTECTION_PROVIDER = "turnstile"
    paas.TURNSTILE_SITE_KEY, paas.TURNSTILE_SECRET_KEY = "site", "secret"
    paas.TURNSTILE_VERIFY_URL = http_receiver.url_for("/siteverify")
    http_receiver.respond_with(200, {"success": True})
    response = signup(api_client, botProtectionToken="token")
    assert response.status_code == 201
    assert User.objects.get().role == "user"


def test_it_refuses_when_signup_is_disabled(api_client, selfhosted):
    selfhosted.SIGNUP_ENABLED = False
    body = assert_error(signup(api_client), 403, "SIGNUP_DISABLED")
    assert body == {"error": body["error"], "code": "SIGNUP_DISABLED"}
    assert not User.objects.exists()


def test_it_refuses_an_existing_email_whatever_its_case(api_client, selfhosted):
    UserFactory(email="taken@example.com")
    assert_error(signup(api_client, email="TAKEN@Example.com"), 409, "conflict")
    assert User.objects.count() == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"password": PASSWORD}, "email"),
        ({"email": "x@example.com"}, "password"),
        ({"email": "not-an-email", "password": PASSWORD}, "email"),
        ({"email": "a" * 250 + "@example.com", "password": PASSWORD}, "email"),
        ({"email": "x@example.com", "password": "short"}, "password"),
        ({"email": "x@example.com", "password": "p" * 129}, "password"),
        ({"email": "x@example.com", "password": {"a": 1}}, "password"),
        ({"email": "x@example.com", "password": None}, "password"),
        ({"email": ["x@example.com"], "password": PASSWORD}, "email"),
    ],
)
def test_it_rejects_invalid_fields(api_client, selfhosted, body, field):
    error = assert_error(api_client.post(URL, body, format="json"), 400, "validation_error")
    assert field in error["fields"]
    assert not User.objects.exists()


def test_a_nul_in_the_password_is_refused_by_the_input_layer(api_client, selfhosted):
    body = {"email": "x@example.com", "password": "nul\x00password"}

    assert_error(api_client.post(URL, body, format="json"), 400, "validation_error")
    assert not User.objects.exists()


def test_it_accepts_a_password_of_exactly_8_and_128_characters(api_client, selfhosted):
    assert signup(api_client, email="a@example.com", password="p" * 8).status_code == 201
    assert signup(api_client, email="b@example.com", password="p" * 128).status_code == 201


def test_it_rejects_malformed_json(api_client, selfhosted):
    response = api_client.post(URL, data="{not json", content_type="application/json")
    assert_error(response, 400, "validation_error")


class TestBotProtection:
    @pytest.fixture
    def turnstile(self, selfhosted, http_receiver):
        selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "turnstile"
        selfhosted.TURNSTILE_SITE_KEY = "turnstile-site"
        selfhosted.TURNSTILE_SECRET_KEY = "turnstile-secret"
        selfhosted.TURNSTILE_VERIFY_URL = http_receiver.url_for("/turnstile/v0/siteverify")
        return http_receiver

    @pytest.fixture
    def recaptcha(self, paas, http_receiver):
        paas.SIGNUP_BOT_PROTECTION_PROVIDER = "recaptcha"
        paas.RECAPTCHA_SITE_KEY = "recaptcha-site"
        paas.RECAPTCHA_SECRET_KEY = "recaptcha-secret"
        paas.RECAPTCHA_VERIFY_URL = http_receiver.url_for("/recaptcha/api/siteverify")
        return http_receiver

    def test_it_verifies_a_turnstile_token_server_side(self, api_client, turnstile):
        turnstile.respond_with(200, {"success": True})
        assert signup(api_client, botProtectionToken="the-token").status_code == 201
        (request,) = turnstile.requests
        assert request.method == "POST" and request.path == "/turnstile/v0/siteverify"
        form = parse_qs(request.body.decode())
        assert form["secret"] == ["turnstile-secret"]
        assert form["response"] == ["the-token"]
        assert form["remoteip"] == ["127.0.0.1"]

    def test_it_verifies_a_recaptcha_token_server_side(self, api_client, recaptcha):
        recaptcha.respond_with(200, {"success": True, "score": 0.9})
        assert signup(api_client, botProtectionToken="captcha").status_code == 201
        form = parse_qs(recaptcha.requests[0].body.decode())
        assert form["secret"] == ["recaptcha-secret"] and form["response"] == ["captcha"]

    def test_it_refuses_a_missing_token_without_asking_the_provider(self, api_client, turnstile):
        assert_error(signup(api_client), 403, "bot_protection_failed")
        assert_error(signup(api_client, botProtectionToken=""), 403, "bot_protection_failed")
        assert turnstile.requests == []
        assert not User.objects.exists()

    def test_it_refuses_a_token_the_provider_rejects(self, api_client, turnstile):
        turnstile.respond_with(200, {"success": False, "error-codes": ["invalid-input-response"]})
        assert_error(signup(api_client, botProtectionToken="bad"), 403, "bot_protection_failed")
        assert not User.objects.exists()

    @pytest.mark.parametrize("reply", [Reply(500, {"success": True}), Reply(200, "not json"), Reply(200, [True])])
    def test_it_fails_closed_on_a_broken_provider_answer(self, api_client, turnstile, reply):
        turnstile.route("/turnstile/v0/siteverify", reply)
        assert_error(signup(api_client, botProtectionToken="t"), 403, "bot_protection_failed")
        assert not User.objects.exists()

    def test_it_fails_closed_when_the_provider_is_unreachable(self, api_client, turnstile):
        turnstile.stop()
        assert_error(signup(api_client, botProtectionToken="t"), 403, "bot_protection_failed")
        assert not User.objects.exists()

    def test_paas_without_a_provider_fails_closed(self, api_client, paas):
        paas.SIGNUP_BOT_PROTECTION_PROVIDER = "none"
        assert_error(signup(api_client), 403, "bot_protection_failed")
        assert not User.objects.exists()

    def test_a_provider_without_its_secret_fails_closed(self, api_client, paas, http_receiver):
        paas.SIGNUP_BOT_PROTECTION_PROVIDER = "recaptcha"
        paas.RECAPTCHA_SITE_KEY, paas.RECAPTCHA_SECRET_KEY = "site", ""
        paas.RECAPTCHA_VERIFY_URL = http_receiver.url
        assert_error(signup(api_client, botProtectionToken="t"), 403, "bot_protection_failed")
        assert http_receiver.requests == []

    def test_an_unknown_provider_fails_closed(self, api_client, selfhosted):
        selfhosted.SIGNUP_BOT_PROTECTION_PROVIDER = "hcaptcha"
        assert_error(signup(api_client, botProtectionToken="t"), 403, "bot_protection_failed")

    def test_disabled_signup_wins_over_bot_protection(self, api_client, turnstile, settings):
        turnstile.respond_with(200, {"success": True})
        settings.SIGNUP_ENABLED = False
        assert_error(signup(api_client, botProtectionToken="t"), 403, "SIGNUP_DISABLED")
        assert turnstile.requests == []
