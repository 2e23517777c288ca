"""OAuth 2.0 authorization code flow (X with PKCE S256, LinkedIn) and token refresh.

- `oauth_start`: a random state (only its SHA-256 digest is stored), bound to the user and the
  agent, valid OAUTH_STATE_TTL_SECONDS (10 minutes), with the client id and the encrypted client
  secret and PKCE verifier; answers the provider's authorize URL.
- `oauth_complete` (the public callback): the state is claimed once, atomically (a replay finds
  it used), must be of the callback's provider and unexpired, and its user must still be an
  editor of its agent; then the code is exchanged at the token URL and the tokens are stored
  encrypted on the agent's integration (status active, `integration.connected`).
- `oauth_refresh`: before expiry (the catalog's `refreshBeforeSeconds`: 10 minutes of X's
  60, 7 days of LinkedIn's 60), the refresh token buys a new access token (a rotated refresh
  token replaces the old one); a failure sets status `error` and emits `integration.failed`.
The client secret and the refresh token have no `env`: they never reach a runtime.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.events import agent_event
from agents.models import SERVING, Agent
from agents.selectors import agent_access
from fleet import netsafety
from fleet.api.principal import Principal
from fleet.errors import FleetError, ValidationFailed
from fleet.task_queue import task_named
from workspaces.roles import Role

from .. import catalog
from ..endpoints import oauth_endpoint
from ..errors import OAuthFailed, OAuthStateInvalid
from ..fields import stored_config
from ..models import Integration, IntegrationStatus, OAuthState
from .connections import APPLY_TASK, integration_connected_event, provider_entry

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Authorization:
    authorize_url: str
    state: str


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def _challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def redirect_uri(provider_id: str, *, request_base: str) -> str:
    """`<public host>/api/integrations/<provider>/oauth/callback`: NEXTAUTH_URL, else
    NORA_PUBLIC_URL, else the host the request came to (Integrations rule 2)."""
    base = (settings.NEXTAUTH_URL or settings.NORA_PUBLIC_URL or request_base).rstrip("/")
    return f"{base}/api/integrations/{provider_id}/oauth/callback"


def oauth_entry(provider_id: str) -> dict:
    entry = provider_entry(provider_id)
    if entry["authType"] != "oauth2":
        raise ValidationFailed({"provider": [f"{entry['name']} does not connect through OAuth 2.0."]})
    return entry


def _client_field(value, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 500:
        raise ValidationFailed({name: ["Required: the app's value from the provider's developer portal."]})
    return value.strip()


@transaction.atomic
def oauth_start(*, agent: Agent, user, provider: str, client_id, client_secret, request_base: str) -> Authorization:
    entry = oauth_entry(provider)
    client_id = _client_field(client_id, "clientId")
    client_secret = _client_field(client_secret, "clientSecret")
    state = secrets.token_urlsafe(32)
    spec = entry["oauth"]
    verifier = secrets.token_urlsafe(64) if spec.get("pkce") else None  # 86 characters, RFC 7636 43..128
    uri = redirect_uri(entry["id"], request_base=request_base)
    OAuthState.objects.create(
        state_digest=_digest(state), provider=entry["id"], agent=agent, user=user, client_id=client_id,
        client_secret=client_secret, code_verifier=verifier, redirect_uri=uri,
        expires_at=timezone.now() + timedelta(seconds=settings.OAUTH_STATE_TTL_SECONDS),
    )
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": uri,
              "scope": " ".join(spec["scopes"]), "state": state}
    if verifier:
        params |= {"code_challenge": _challenge(verifier), "code_challenge_method": "S256"}
    return Authorization(authorize_url=f"{oauth_endpoint(entry, 'authorize')}?{urlencode(params)}", state=state)


def _claim(provider_id: str, state: str) -> OAuthState:
    """Use the state once. Unknown, another provider's, used or expired: OAuthStateInvalid."""
    now = timezone.now()
    digest = _digest(state) if isinstance(state, str) and state else ""
    with transaction.atomic():
        row = OAuthState.objects.select_for_update().filter(state_digest=digest).first()
        if row is None or row.provider != provider_id:
            raise OAuthStateInvalid("The authorization state is unknown for this provider; start again.")
        if row.used_at is not None:
            raise OAuthStateInvalid("The authorization state was already used; start again.")
        row.used_at = now
        row.save(update_fields=["used_at"])
    if row.expires_at <= now:
        raise OAuthStateInvalid("The authorization state has expired (10 minutes); start again.")
    return row


def oauth_complete(*, provider: str, code, state) -> Integration:
    """The callback: claim the state, check its binding, exchange the code, store the tokens."""
    entry = oauth_entry(provider)
    row = _claim(entry["id"], state)
    try:
        # Bound to the user and the agent: the user who started it must still operate the agent.
        agent_access(Principal(user=row.user), row.agent_id, min_role=Role.EDITOR)
    except FleetError:
        raise OAuthStateInvalid("The authorization was started for an agent its user can no longer operate.") from None
    if not isinstance(code, str) or not code:
        raise OAuthFailed("The provider sent no authorization code.")
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": row.redirect_uri}
    if row.code_verifier:
        form["code_verifier"] = row.code_verifier
    tokens = _token_request(entry, form, client_id=row.client_id, client_secret=row.client_secret)
    return _store_tokens(entry, row, tokens)


@transaction.atomic
def _store_tokens(entry: dict, row: OAuthState, tokens: dict) -> Integration:
    integration, _ = Integration.objects.select_for_update().get_or_create(
        agent_id=row.agent_id, provider=entry["id"], defaults={"created_by": row.user})
    secret = {"client_secret": row.client_secret, "access_token": tokens["access_token"]}
    if tokens.get("refresh_token"):
        secret["refresh_token"] = tokens["refresh_token"]
    integration.config = {"client_id": row.client_id}
    integration.secrets = json.dumps(secret, sort_keys=True)
    integration.status = IntegrationStatus.ACTIVE
    integration.last_error = ""
    integration.token_expires_at = _expiry(entry, tokens)
    integration.save()
    integration_connected_event(integration, entry)
    return integration


def _expiry(entry: dict, tokens: dict):
    lifetime = tokens.get("expires_in")
    if not isinstance(lifetime, (int, float)) or lifetime <= 0:
        lifetime = entry["oauth"]["tokenLifetimeSeconds"]
    return timezone.now() + timedelta(seconds=int(lifetime))


def _token_request(entry: dict, form: dict, *, client_id: str, client_secret: str) -> dict:
    """POST to the token URL; the client authenticates by Basic (X) or in the body (LinkedIn)."""
    auth = None
    if entry["oauth"].get("clientAuth") == "basic":
        auth = (client_id, client_secret)
        form = {**form, "client_id": client_id}
    else:
        form = {**form, "client_id": client_id, "client_secret": client_secret}
    try:
        response = netsafety.safe_session().post(oauth_endpoint(entry, "token"), data=form, auth=auth,
                                                 headers={"Accept": "application/json"})
    except (netsafety.UnsafeTarget, requests.RequestException) as exc:
        raise OAuthFailed(f"{entry['name']}'s token endpoint could not be reached ({type(exc).__name__}).") from None
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
        reason = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
        raise OAuthFailed(f"{entry['name']} refused the token request ({response.status_code}"
                          f"{': ' + str(reason)[:200] if reason else ''}).")
    return body


# -- refresh -------------------------------------------------------------------------------------


def refresh_due() -> list[str]:
    """Ids of the OAuth integrations whose access token expires within their provider's margin."""
    now = timezone.now()
    due = []
    for provider_id in ("twitter", "linkedin"):
        entry = catalog.provider(provider_id)
        horizon = now + timedelta(seconds=entry["oauth"]["refreshBeforeSeconds"])
        due += [str(pk) for pk in Integration.objects.filter(
            provider=provider_id, status=IntegrationStatus.ACTIVE, token_expires_at__lte=horizon,
        ).values_list("pk", flat=True)]
    return due


def oauth_refresh(*, integration_id) -> Integration | None:
    """Rotate the access token (and the refresh token if the provider rotates it). A failure
    leaves the old tokens, sets status `error` and emits `integration.failed`."""
    integration = Integration.objects.select_related("agent").filter(pk=integration_id).first()
    if integration is None or integration.status != IntegrationStatus.ACTIVE:
        return integration
    entry = catalog.provider(integration.provider)
    split = stored_config(integration)
    refresh_token = split.secret.get("refresh_token")
    try:
        if not refresh_token:
            raise OAuthFailed(f"{entry['name']} gave no refresh token; authorize again.")
        tokens = _token_request(entry, {"grant_type": "refresh_token", "refresh_token": refresh_token},
                                client_id=split.plain.get("client_id", ""),
                                client_secret=split.secret.get("client_secret", ""))
    except OAuthFailed as exc:
        return _refresh_failed(integration, entry, exc.message)
    with transaction.atomic():
        locked = Integration.objects.select_for_update().get(pk=integration.pk)
        secret = stored_config(locked).secret
        secret["access_token"] = tokens["access_token"]
        if tokens.get("refresh_token"):
            secret["refresh_token"] = tokens["refresh_token"]
        locked.secrets = json.dumps(secret, sort_keys=True)
        locked.token_expires_at = _expiry(entry, tokens)
        locked.save(update_fields=["secrets", "token_expires_at", "updated_at"])
        if locked.agent.status in SERVING:
            task_named(APPLY_TASK).delay_on_commit(str(locked.agent_id), False)  # the new access token
    return locked


@transaction.atomic
def _refresh_failed(integration: Integration, entry: dict, reason: str) -> Integration:
    integration.status = IntegrationStatus.ERROR
    integration.last_error = reason[:500]
    integration.save(update_fields=["status", "last_error", "updated_at"])
    agent_event(integration.agent, "integration.failed",
                f"{entry['name']} on agent {integration.agent.name} could not refresh its token: {reason}",
                integration_id=str(integration.pk), provider=entry["id"], reason=reason)
    logger.warning("OAuth refresh of integration %s (%s) failed: %s", integration.pk, entry["id"], reason)
    return integration
