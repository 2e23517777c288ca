"""OAuth login against fake GitHub and Google APIs served by a real HTTP server on 127.0.0.1."""

import base64

import pytest
from social_django.models import UserSocialAuth

from accounts.models import User
from accounts.tokens import user_from_session_token
from tests.factories.accounts import DEFAULT_PASSWORD, UserFactory

from .conftest import Reply, assert_error

URL = "/api/auth/oauth-login"
GITHUB_KEY, GITHUB_SECRET = "gh-client-id", "gh-client-secret"
GOOGLE_KEY = "google-client-id.apps.googleusercontent.com"
GOOD = "good-provider-token"
pytestmark = pytest.mark.django_db


class FakeGithub:
    """GitHub's API as far as sign-in uses it: app token check, /user, /user/emails."""

    def __init__(self, receiver):
        self.receiver = receiver
        self.profile = {"id": 4242, "login": "octocat", "name": "The Octocat", "email": None}
        self.emails = [
            {"email": "old@example.com", "primary": False, "verified": True},
            {"email": "octo@example.com", "primary": True, "verified": True},
        ]
        receiver.respond_with(404, {"message": "Not Found"})  # any path not routed below
        basic = "Basic " + base64.b64encode(f"{GITHUB_KEY}:{GITHUB_SECRET}".encode()).decode()
        receiver.route(
            f"/applications/{GITHUB_KEY}/token",
            lambda r: Reply(200, {"id": 1}) if r.header("authorization") == basic and r.json() == {"access_token": GOOD}
            else Reply(404, {"message": "Not Found"}),
            method="POST",
        )
        receiver.route("/user", lambda r: self._authorised(r, self.profile))
        receiver.route("/user/emails", lambda r: self._authorised(r, self.emails))

    @staticmethod
    def _authorised(request, body):
        if request.header("authorization") != f"token {GOOD}":
            return Reply(401, {"message": "Bad credentials"})
        return Reply(200, body)


class FakeGoogle:
    def __init__(self, receiver):
        self.userinfo = {"sub": "g-77", "email": "gina@example.com", "email_verified": True, "name": "Gina"}
        self.tokeninfo = {"aud": GOOGLE_KEY, "azp": GOOGLE_KEY, "expires_in": "3599"}
        self.id_claims = {
            "iss": "https://accounts.google.com",
            "aud": GOOGLE_KEY,
            "sub": "g-77",
            "email": "gina@example.com",
            "email_verified": "true",
            "name": "Gina",
        }
        receiver.route("/tokeninfo", self._tokeninfo)
        receiver.route("/userinfo", lambda r: Reply(200, self.userinfo) if r.header("authorization") == f"Bearer {GOOD}"
                       else Reply(401, {"error": "invalid_token"}))

    def _tokeninfo(self, request):
        if request.query.get("access_token") == [GOOD]:
            return Reply(200, self.tokeninfo)
        if request.query.get("id_token") == [GOOD]:
            return Reply(200, self.id_claims)
        return Reply(400, {"error": "invalid_token"})


@pytest.fixture
def oauth(selfhosted, http_receiver):
    selfhosted.OAUTH_LOGIN_ENABLED = True
    selfhosted.GITHUB_API_URL = http_receiver.url + "/"
    selfhosted.GOOGLE_USERINFO_URL = http_receiver.url_for("/userinfo")
    selfhosted.GOOGLE_TOKENINFO_URL = http_receiver.url_for("/tokeninfo")
    selfhosted.SOCIAL_AUTH_GITHUB_KEY, selfhosted.SOCIAL_AUTH_GITHUB_SECRET = GITHUB_KEY, GITHUB_SECRET
    selfhosted.SOCIAL_AUTH_GOOGLE_OAUTH2_KEY = GOOGLE_KEY
    return selfhosted


@pytest.fixture
def github(oauth, http_receiver):
    return FakeGithub(http_receiver)


@pytest.fixture
def google(oauth, http_receiver):
    return FakeGoogle(http_receiver)


def oauth_login(client, provider="github", **tokens):
    body = {"provider": provider, **(tokens or {"oauthAccessToken": GOOD})}
    return client.post(URL, body, format="json")


def test_a_new_github_identity_registers_and_signs_in(api_client, github):
    UserFactory()  # not the first user: a regular account
    response = oauth_login(api_client)
    assert response.status_code == 200
    body = response.json()
    user = User.objects.get(email="octo@example.com")
    assert user_from_session_token(body["token"]) == user
    assert body["user"] == {
        "id": str(user.id),
        "email": "octo@example.com",
        "name": "The Octocat",
        "role": "user",
        "provider": "github",
        "avatar": None,
        "created_at": user.created_at.isoformat(),
    }
    assert not user.has_usable_password()
    assert user.last_login is not None
    link = UserSocialAuth.objects.get(user=user)
    assert (link.provider, link.uid) == ("github", "4242")


def test_it_sets_the_httponly_session_cookie(api_client, github):
    response = oauth_login(api_client)
    cookie = response.cookies["service_auth"]
    assert cookie.value == response.json()["token"]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert cookie["path"] == "/"
    assert 7 * 24 * 3600 - 2 <= int(cookie["max-age"]) <= 7 * 24 * 3600
    assert not cookie["secure"]


def test_the_cookie_is_secure_when_configured(api_client, github, settings):
    settings.SESSION_COOKIE_SECURE_API = True
    assert oauth_login(api_client).cookies["service_auth"]["secure"] is True


def test_the_first_oauth_user_of_an_empty_selfhosted_install_is_admin(api_client, github):
    assert oauth_login(api_client).json()["user"]["role"] == "admin"


def test_paas_oauth_users_are_regular_users(api_client, github, settings):
    settings.PLATFORM_MODE = "paas"
    assert oauth_login(api_client).json()["user"]["role"] == "user"


def test_a_linked_user_signs_in_again_without_a_second_account(api_client, github):
    first = oauth_login(api_client).json()["user"]["id"]
    github.profile["name"] = "Renamed"
    again = oauth_login(api_client).json()["user"]
    assert again["id"] == first
    assert User.objects.count() == 1
    assert UserSocialAuth.objects.count() == 1


def test_a_linked_user_signs_in_while_signup_is_disabled(api_client, github, settings):
    first = oauth_login(api_client).json()["user"]["id"]
    settings.SIGNUP_ENABLED = False
    response = oauth_login(api_client)
    assert response.status_code == 200
    assert response.json()["user"]["id"] == first


def test_a_new_identity_is_refused_while_signup_is_disabled(api_client, github, settings):
    settings.SIGNUP_ENABLED = False
    body = assert_error(oauth_login(api_client), 403, "SIGNUP_DISABLED")
    assert set(body) == {"error", "code"}
    assert not User.objects.exists()
    assert not UserSocialAuth.objects.exists()


def test_a_verified_email_links_the_existing_account(api_client, github, settings):
    settings.SIGNUP_ENABLED = False  # linking creates no user, so it is allowed
    existing = UserFactory(email="OCTO@example.com")
    response = oauth_login(api_client)
    assert response.status_code == 200
    assert response.json()["user"]["id"] == str(existing.id)
    assert UserSocialAuth.objects.get().user == existing
    existing.refresh_from_db()
    assert existing.check_password(DEFAULT_PASSWORD) and existing.provider is None


def test_the_public_email_serves_when_the_emails_list_is_not_allowed(api_client, github, http_receiver):
    github.profile["email"] = "public@example.com"
    http_receiver.route("/user/emails", Reply(403, {"message": "Resource not accessible"}))
    assert oauth_login(api_client).json()["user"]["email"] == "public@example.com"


def test_an_identity_without_a_verified_email_is_refused(api_client, github):
    github.emails = [{"email": "octo@example.com", "primary": True, "verified": False}]
    assert_error(oauth_login(api_client), 401, "invalid_credentials")
    assert not User.objects.exists()


def test_a_disabled_linked_user_is_refused(api_client, github):
    user_id = oauth_login(api_client).json()["user"]["id"]
    User.objects.filter(pk=user_id).update(is_active=False)
    assert_error(oauth_login(api_client), 401, "invalid_credentials")


def test_a_token_the_provider_rejects_is_401(api_client, github):
    assert_error(oauth_login(api_client, oauthAccessToken="stolen-or-expired"), 401, "invalid_credentials")
    assert not User.objects.exists()


def test_a_github_token_issued_to_another_app_is_401(api_client, github, settings):
    settings.SOCIAL_AUTH_GITHUB_KEY = "some-other-app"
    assert_error(oauth_login(api_client), 401, "invalid_credentials")


def test_an_unreachable_provider_is_502(api_client, github, http_receiver):
    http_receiver.stop()
    assert_error(oauth_login(api_client), 502, "oauth_provider_unreachable")


def test_a_failing_provider_is_502(api_client, github, http_receiver):
    http_receiver.route("/user", Reply(503, "down"))
    assert_error(oauth_login(api_client), 502, "oauth_provider_unreachable")


def test_a_provider_without_client_credentials_is_refused(api_client, github, settings):
    settings.SOCIAL_AUTH_GITHUB_SECRET = ""
    assert_error(oauth_login(api_client), 403, "oauth_provider_not_configured")
    settings.SOCIAL_AUTH_GOOGLE_OAUTH2_KEY = ""
    assert_error(oauth_login(api_client, "google"), 403, "oauth_provider_not_configured")


def test_it_is_403_while_oauth_login_is_disabled(api_client, github, settings):
    settings.OAUTH_LOGIN_ENABLED = False
    assert_error(oauth_login(api_client), 403, "oauth_login_disabled")
    assert_error(api_client.post(URL, {}, format="json"), 403, "oauth_login_disabled")


class TestGoogle:
    def test_an_access_token_registers_and_signs_in(self, api_client, google):
        response = oauth_login(api_client, "google")
        assert response.status_code == 200
        user = response.json()["user"]
        assert (user["email"], user["provider"], user["name"]) == ("gina@example.com", "google", "Gina")
        assert UserSocialAuth.objects.get().uid == "g-77"
        assert "service_auth" in response.cookies

    def test_an_id_token_signs_in_the_same_identity(self, api_client, google):
        first = oauth_login(api_client, "google").json()["user"]["id"]
        response = oauth_login(api_client, "google", oauthIdToken=GOOD)
        assert response.status_code == 200
        assert response.json()["user"]["id"] == first

    def test_an_access_token_for_another_client_is_401(self, api_client, google):
        google.tokeninfo = {"aud": "someone-else", "azp": "someone-else"}
        assert_error(oauth_login(api_client, "google"), 401, "invalid_credentials")

    def test_an_id_token_for_another_client_is_401(self, api_client, google):
        google.id_claims["aud"] = "someone-else"
        assert_error(oauth_login(api_client, "google", oauthIdToken=GOOD), 401, "invalid_credentials")

    def test_an_id_token_from_another_issuer_is_401(self, api_client, google):
        google.id_claims["iss"] = "https://evil.example.com"
        assert_error(oauth_login(api_client, "google", oauthIdToken=GOOD), 401, "invalid_credentials")

    def test_an_unverified_email_is_401(self, api_client, google):
        google.userinfo["email_verified"] = False
        assert_error(oauth_login(api_client, "google"), 401, "invalid_credentials")
        google.id_claims["email_verified"] = "false"
        assert_error(oauth_login(api_client, "google", oauthIdToken=GOOD), 401, "invalid_credentials")
        assert not User.objects.exists()

    def test_an_invalid_id_token_is_401(self, api_client, google):
        assert_error(oauth_login(api_client, "google", oauthIdToken="forged"), 401, "invalid_credentials")

    def test_a_malformed_tokeninfo_answer_is_401(self, api_client, google, http_receiver):
        http_receiver.route("/tokeninfo", Reply(200, ["not", "an", "object"]))
        assert_error(oauth_login(api_client, "google"), 401, "invalid_credentials")


@pytest.mark.parametrize("body, field", [
    ({"oauthAccessToken": GOOD}, "provider"),
    ({"provider": "facebook", "oauthAccessToken": GOOD}, "provider"),
    ({"provider": "github"}, "oauthAccessToken"),
    ({"provider": "github", "oauthIdToken": GOOD}, "oauthAccessToken"),
    ({"provider": "google", "oauthAccessToken": ""}, "oauthAccessToken"),
    ({"provider": "google", "oauthIdToken": {"x": 1}}, "oauthIdToken"),
    ({"provider": "github", "oauthAccessToken": "t" * 9000}, "oauthAccessToken"),
])
def test_it_rejects_missing_or_invalid_fields(api_client, oauth, http_receiver, body, field):
    error = assert_error(api_client.post(URL, body, format="json"), 400, "validation_error")
    assert field in error["fields"]
    assert http_receiver.requests == []


def test_it_refuses_conflicting_credentials(api_client, github, http_receiver):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer x", HTTP_X_API_KEY="y")
    assert_error(oauth_login(api_client), 400, "conflicting_auth")
    assert http_receiver.requests == []


def test_an_oauth_account_cannot_log_in_with_a_password(api_client, github):
    oauth_login(api_client)
    response = api_client.post(
        "/api/auth/login", {"email": "octo@example.com", "password": "anything goes"}, format="json"
    )
    assert_error(response, 401, "invalid_credentials")
