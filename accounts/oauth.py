"""Server-side verification of OAuth provider tokens with social-core's backends.

The client runs the OAuth dance itself and sends us the provider's token; we ask the
provider who it belongs to and that it was issued to our application (so a token issued to
another app cannot sign anyone in here). Provider endpoints come from settings
(GITHUB_API_URL, GOOGLE_USERINFO_URL, GOOGLE_TOKENINFO_URL).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import urljoin

from django.conf import settings
from social_core.backends.github import GithubOAuth2
from social_core.backends.google import GoogleOAuth2
from social_core.exceptions import AuthProviderError, SocialAuthBaseException
from social_django.utils import load_strategy

from fleet.errors import Forbidden, InvalidCredentials, UpstreamFailure

logger = logging.getLogger(__name__)

GITHUB = "github"
GOOGLE = "google"
PROVIDERS = (GITHUB, GOOGLE)
GOOGLE_ISSUERS = ("accounts.google.com", "https://accounts.google.com")


class OAuthProviderUnavailable(UpstreamFailure):
    code = "oauth_provider_unreachable"
    default_message = "The OAuth provider could not be reached; try again."


class OAuthProviderNotConfigured(Forbidden):
    code = "oauth_provider_not_configured"
    default_message = "Sign-in with this provider is not configured."


@dataclass(frozen=True)
class ProviderIdentity:
    """Who the provider says the token belongs to."""

    provider: str  # "github" or "google", as the user record's `provider`
    backend_name: str  # social-auth's name, stored in UserSocialAuth.provider
    uid: str
    email: str | None  # only an address the provider says is verified
    name: str | None
    extra_data: dict


class FleetGithubOAuth2(GithubOAuth2):
    def api_url(self) -> str:
        return settings.GITHUB_API_URL

    def token_belongs_to_app(self, access_token: str) -> None:
        """GitHub's "check a token" endpoint answers 404 for a token of another app."""
        key, secret = settings.SOCIAL_AUTH_GITHUB_KEY, settings.SOCIAL_AUTH_GITHUB_SECRET
        self.get_json(
            urljoin(self.api_url(), f"applications/{key}/token"),
            method="POST",
            auth=(key, secret),
            json={"access_token": access_token},
            headers={"Accept": "application/vnd.github+json"},
        )

    def api_get(self, access_token: str, path: str):
        return self.get_json(urljoin(self.api_url(), path), headers={"Authorization": f"token {access_token}"})

    def verified_email(self, access_token: str, profile: dict) -> str | None:
        """The primary verified address from /user/emails, else the public one (always verified)."""
        try:
            emails = self.api_get(access_token, "user/emails")
        except AuthProviderError as exc:
            if exc.status_code is None or exc.status_code >= 500:
                raise
            emails = []  # the token lacks the user:email scope
        if isinstance(emails, list):
            good = [e for e in emails if isinstance(e, dict) and e.get("verified") and e.get("email")]
            good.sort(key=lambda e: not e.get("primary"))
            if good:
                return str(good[0]["email"])
        public = profile.get("email")
        return public if isinstance(public, str) and public else None


class FleetGoogleOAuth2(GoogleOAuth2):
    def user_data(self, access_token: str, *args, **kwargs) -> dict:
        response = self.get_json(
            settings.GOOGLE_USERINFO_URL, headers={"Authorization": f"Bearer {access_token}"}
        )
        self.validate_email_verified(response)
        return response

    def token_info(self, **token) -> dict:
        """Google's tokeninfo for an access_token= or id_token=; checks audience and expiry."""
        info = self.get_json(settings.GOOGLE_TOKENINFO_URL, params=token, stage="token_validation")
        if not isinstance(info, dict):
            raise InvalidCredentials("Google's token information was unreadable.")
        client_id = settings.SOCIAL_AUTH_GOOGLE_OAUTH2_KEY
        if client_id not in (info.get("aud"), info.get("azp")):
            raise InvalidCredentials("The Google token was issued to another application.")
        if "id_token" in token and info.get("iss") not in GOOGLE_ISSUERS:
            raise InvalidCredentials("The Google ID token has an unknown issuer.")
        return info


def _github_identity(backend: FleetGithubOAuth2, access_token: str) -> ProviderIdentity:
    if not (settings.SOCIAL_AUTH_GITHUB_KEY and settings.SOCIAL_AUTH_GITHUB_SECRET):
        raise OAuthProviderNotConfigured("Sign-in with GitHub is not configured.")
    backend.token_belongs_to_app(access_token)
    profile = backend.api_get(access_token, "user")
    if not isinstance(profile, dict) or not isinstance(profile.get("id"), (int, str)) or profile["id"] == "":
        raise InvalidCredentials("GitHub did not say who the token belongs to.")
    return ProviderIdentity(
        provider=GITHUB,
        backend_name=backend.name,
        uid=str(profile["id"]),
        email=backend.verified_email(access_token, profile),
        name=profile.get("name") or profile.get("login"),
        extra_data={"id": profile["id"], "login": profile.get("login")},
    )


def _google_identity(backend: FleetGoogleOAuth2, access_token: str | None, id_token: str | None) -> ProviderIdentity:
    if not settings.SOCIAL_AUTH_GOOGLE_OAUTH2_KEY:
        raise OAuthProviderNotConfigured("Sign-in with Google is not configured.")
    if id_token:
        claims = backend.token_info(id_token=id_token)
        # tokeninfo gives the claims as strings
        claims["email_verified"] = claims.get("email_verified") in (True, "true")
        backend.validate_email_verified(claims, stage="token_validation")
    else:
        backend.token_info(access_token=access_token)
        claims = backend.user_data(access_token)
    if not isinstance(claims, dict) or not claims.get("sub"):
        raise InvalidCredentials("Google did not say who the token belongs to.")
    email = claims.get("email")
    return ProviderIdentity(
        provider=GOOGLE,
        backend_name=backend.name,
        uid=str(claims["sub"]),
        email=email if isinstance(email, str) and email else None,
        name=claims.get("name"),
        extra_data={"sub": claims["sub"]},
    )


def provider_identity(*, provider: str, access_token: str | None, id_token: str | None) -> ProviderIdentity:
    """Verify a provider token with the provider; raise 401, 403 or 502 when that fails."""
    # No request: verifying a token reads nothing of it, and an /api request has no Django
    # session for social-auth to keep state in (fleet.api.console_middleware).
    strategy = load_strategy()
    try:
        if provider == GITHUB:
            if not access_token:
                raise InvalidCredentials("GitHub sign-in needs an oauthAccessToken.")
            return _github_identity(FleetGithubOAuth2(strategy=strategy), access_token)
        return _google_identity(FleetGoogleOAuth2(strategy=strategy), access_token, id_token)
    except AuthProviderError as exc:
        if exc.status_code is None or exc.status_code >= 500 or exc.status_code == 429:
            logger.warning("OAuth provider %s unavailable: %s", provider, exc)
            raise OAuthProviderUnavailable() from exc
        raise InvalidCredentials(f"The {provider} token was rejected.") from exc
    except SocialAuthBaseException as exc:  # malformed answers, unverified email, bad claims
        logger.info("OAuth %s token refused: %s", provider, exc)
        raise InvalidCredentials(f"The {provider} token was rejected.") from exc
