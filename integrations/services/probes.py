"""Connection tests: call the provider's API with the stored credentials (catalog `test`).

A test is data: `base` (the API root, `{field}` placeholders allowed, replaced by the
INTEGRATION_ENDPOINTS "api" override), `method`, `path`, `headers` (templates), `basic`
(user and password templates), `json` (a body), and what fails a 2xx answer: `failWhen`
(`{"key", "notEquals"}`, e.g. Slack's `ok`) or `failWhenKey` (GraphQL `errors`). Every call goes
through fleet.netsafety (no private or loopback target unless OUTBOUND_ALLOWED_HOSTS allows it).
No message carries a credential: each is scrubbed of the integration's secrets.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from urllib.parse import quote

import requests
from django.utils import timezone

from fleet import netsafety

from .. import catalog
from ..endpoints import endpoint_override
from ..fields import secret_values, stored_config, value_of
from ..models import Integration

logger = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")
MAX_MESSAGE = 300


@dataclass(frozen=True)
class TestResult:
    success: bool
    message: str = ""
    error: str = ""

    def as_dict(self) -> dict:
        return {"success": True, "message": self.message} if self.success else {"success": False, "error": self.error}


def integration_test(*, integration: Integration) -> TestResult:
    """Run the provider's test and record when and how it went."""
    entry = catalog.provider(integration.provider)
    split = stored_config(integration)
    result = _run(entry, split, integration)
    integration.last_tested_at = timezone.now()
    integration.last_test_result = result.as_dict()
    integration.save(update_fields=["last_tested_at", "last_test_result", "updated_at"])
    return result


def _run(entry: dict, split, integration: Integration) -> TestResult:
    name = entry["name"]
    if entry["authType"] == "oauth2" and not split.secret.get("access_token"):
        return TestResult(False, error=f"{name} is not authorized yet: finish the OAuth authorization.")
    spec = entry.get("test")
    if not spec:
        return TestResult(True, message=f"Credentials are stored; {name} has no connection test.")
    secrets = secret_values(split)

    def fill(template: str, *, in_path: bool = False) -> str:
        def value(match):
            found = value_of(entry, split, match.group(1))
            text = "" if found is None else str(found)
            return quote(text, safe="") if in_path else text
        return _PLACEHOLDER.sub(value, template)

    base = endpoint_override(entry["id"], "api") or fill(spec["base"])
    url = base.rstrip("/") + fill(spec["path"], in_path=True)
    headers = {"User-Agent": "Fleet-integration-test", **{k: fill(v) for k, v in (spec.get("headers") or {}).items()}}
    auth = tuple(fill(part) for part in spec["basic"]) if spec.get("basic") else None
    try:
        response = netsafety.safe_session().request(spec.get("method", "GET"), url, headers=headers, auth=auth,
                                                    json=spec.get("json"))
    except netsafety.UnsafeTarget as exc:
        return TestResult(False, error=_scrub(f"{name}'s address is not an allowed target: {exc}", secrets))
    except requests.RequestException as exc:
        logger.info("Connection test of %s (%s) could not reach the provider: %s", integration.pk, entry["id"],
                    type(exc).__name__)
        return TestResult(False, error=f"{name} could not be reached ({type(exc).__name__}).")
    return _judge(name, spec, response, secrets)


def _judge(name: str, spec: dict, response: requests.Response, secrets: list[str]) -> TestResult:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not 200 <= response.status_code < 300:
        detail = _detail(body) or response.reason or ""
        text = f"{name} answered {response.status_code}: {detail}".rstrip(": ")
        return TestResult(False, error=_scrub(text, secrets))
    rule = spec.get("failWhen")
    if rule and (not isinstance(body, dict) or body.get(rule["key"]) != rule["notEquals"]):
        detail = (body or {}).get(spec.get("errorKey", "error")) if isinstance(body, dict) else None
        return TestResult(False, error=_scrub(f"{name} refused the credentials: {detail or 'not accepted'}", secrets))
    key = spec.get("failWhenKey")
    if key and isinstance(body, dict) and body.get(key):
        return TestResult(False, error=_scrub(f"{name} refused the credentials: {_detail(body) or key}", secrets))
    return TestResult(True, message=f"Connected to {name}.")


def _detail(body) -> str:
    """A provider's own error sentence, from the shapes APIs use."""
    if isinstance(body, dict):
        for key in ("message", "error_description", "error", "detail", "description", "errors"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message") or value.get("type")
            if isinstance(value, list) and value:
                first = value[0]
                value = first.get("message") if isinstance(first, dict) else first
            if isinstance(value, str) and value:
                return value
    return ""


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "[REDACTED]")
    return text[:MAX_MESSAGE]
