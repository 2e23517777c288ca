"""CSRF defence of cookie sessions: an unsafe request authenticated by the `service_auth`
cookie must come from the control plane's own origin or one of CSRF_TRUSTED_ORIGINS.

A browser attaches the cookie to cross-site requests by itself (a `text/plain` form POST needs
no preflight), so the cookie alone proves nothing. Browsers always send `Origin` on unsafe
cross-origin requests; without it we fall back to `Referer`, and refuse when neither is sent.
Bearer and key requests are never sent by a browser on its own and need no such proof.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from fleet.errors import Forbidden

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class CrossOriginRequest(Forbidden):
    code = "csrf_failed"
    default_message = "A request signed in by the session cookie must come from this site's own origin."


def _origin_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def allowed_origins(request) -> set[str]:
    try:
        own = f"{request.scheme}://{request.get_host()}".lower()
    except Exception:  # DisallowedHost: no origin of ours to match
        own = None
    trusted = {origin.rstrip("/").lower() for origin in settings.CSRF_TRUSTED_ORIGINS}
    return trusted | ({own} if own else set())


def origin_allowed(request, origin: str) -> bool:
    """Whether `origin` (an Origin header's value) is this site's own origin or a trusted one."""
    claimed = _origin_of(origin) if origin and origin != "null" else None
    return claimed is not None and claimed in allowed_origins(request)


def is_same_origin(request) -> bool:
    meta = request.META
    origin = meta.get("HTTP_ORIGIN") or ""
    if origin:
        return origin_allowed(request, origin)
    referer = meta.get("HTTP_REFERER") or ""
    claimed = _origin_of(referer) if referer else None
    return claimed is not None and claimed in allowed_origins(request)


def require_same_origin(request) -> None:
    """Raise 403 csrf_failed for an unsafe request that does not prove same origin."""
    if request.method in SAFE_METHODS:
        return
    if not is_same_origin(request):
        raise CrossOriginRequest()
