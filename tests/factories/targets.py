"""Registered targets for tests: Kubernetes clusters (through the registry's service)."""

from __future__ import annotations

import itertools

from django.conf import settings
from django.test import override_settings

from agents.targets.k8s_services import k8s_cluster_create
from tests.infra.kube import kubeconfig_for

_numbers = itertools.count(1)
CLOSED_PORT_SERVER = "http://127.0.0.1:9"  # nothing listens: connections are refused at once


def make_cluster(*, server: str = CLOSED_PORT_SERVER, name: str | None = None, **fields):
    """A registered cluster whose kubeconfig points at `server` (a closed port unless given).
    The emulator and the closed port are on loopback, which the kubeconfig's outbound rule
    refuses unless allow-listed: allow-listed for the registration, as an operator with a
    cluster on this host would."""
    fields.setdefault("namespace", "agents")
    allowed = [*(settings.OUTBOUND_ALLOWED_HOSTS or ()), "127.0.0.1"]
    with override_settings(OUTBOUND_ALLOWED_HOSTS=allowed):
        return k8s_cluster_create(name=name or f"cluster-{next(_numbers)}",
                                  kubeconfig=kubeconfig_for(server, namespace=fields["namespace"]), **fields)
