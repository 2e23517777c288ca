"""Prometheus metrics: request counts and latency per route, plus gauges apps contribute.

`PrometheusMiddleware` (first in MIDDLEWARE) counts every request by method, route
pattern (e.g. "api/agents/<uuid:agent_id>", never the raw path, so label sets stay
bounded) and status. Apps add gauges computed at scrape time with `register_gauge()`, from
their AppConfig.ready() (the kernel's own: the periodic jobs' lateness, fleet.scheduler):

    register_gauge("fleet_periodic_job_late", "...", late_jobs_gauge, labelnames=("job",))

where the callable returns a number, or {("label value",): number, ...}. A gauge whose
callable fails is left out of that scrape (and logged); the scrape goes on.

`/metrics` serves the text format. Under gunicorn with several workers the counters are
summed over the workers through PROMETHEUS_MULTIPROC_DIR, which fleet/gunicorn_conf.py sets
and empties before the workers start. Set METRICS_TOKEN to require `Authorization: Bearer <token>`;
without one it is 404 unless METRICS_PUBLIC (the default only under DEBUG).
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

logger = logging.getLogger(__name__)

UNMATCHED_ROUTE = "unmatched"
API_NOT_FOUND_URL_NAME = "api-not-found"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")

REQUESTS = Counter(
    "fleet_http_requests_total",
    "HTTP requests answered, by method, route pattern and status.",
    ["method", "route", "status"],
)
LATENCY = Histogram(
    "fleet_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route pattern.",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


def route_of(request) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None or match.url_name == API_NOT_FOUND_URL_NAME:
        return UNMATCHED_ROUTE
    return match.route or UNMATCHED_ROUTE


class PrometheusMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in _METHODS else "other"
        route = route_of(request)
        LATENCY.labels(method, route).observe(time.perf_counter() - started)
        REQUESTS.labels(method, route, str(response.status_code)).inc()
        return response


# --- Gauges contributed by apps, computed at scrape time --------------------------------------

GaugeValue = float | Mapping[tuple[str, ...], float]


@dataclass(frozen=True)
class _Gauge:
    name: str
    documentation: str
    collect: Callable[[], GaugeValue]
    labelnames: tuple[str, ...]


_gauges: dict[str, _Gauge] = {}


def register_gauge(
    name: str, documentation: str, collect: Callable[[], GaugeValue], *, labelnames: tuple[str, ...] = ()
) -> None:
    """Add (or replace, by name) a gauge whose value `collect()` computes at scrape time."""
    if not _NAME.match(name) or not all(_NAME.match(label) for label in labelnames):
        raise ValueError(f"{name!r} or its labels are not valid Prometheus names.")
    _gauges[name] = _Gauge(name, documentation, collect, tuple(labelnames))


class _AppGaugeCollector:
    def collect(self):
        for gauge in list(_gauges.values()):
            try:
                value = gauge.collect()
                family = GaugeMetricFamily(gauge.name, gauge.documentation, labels=gauge.labelnames)
                if isinstance(value, Mapping):
                    for labels, number in value.items():
                        family.add_metric([str(v) for v in labels], float(number))
                else:
                    family.add_metric([], float(value))
            except Exception:  # one broken gauge must not break the scrape
                logger.exception("Metrics gauge %s failed", gauge.name)
                continue
            yield family


_app_gauges = _AppGaugeCollector()
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    REGISTRY.register(_app_gauges)


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        registry.register(_app_gauges)
        return registry
    return REGISTRY


def metrics_view(request):
    """GET /metrics: the Prometheus text exposition format."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    token = getattr(settings, "METRICS_TOKEN", "")
    if not token and not settings.METRICS_PUBLIC:  # closed by default: say nothing is here
        return HttpResponse("Not found\n", status=404, content_type="text/plain")
    if token:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return HttpResponse(
                "Unauthorized\n", status=401, content_type="text/plain", headers={"WWW-Authenticate": "Bearer"}
            )
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
