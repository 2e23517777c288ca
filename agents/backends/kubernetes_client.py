"""API clients of registered Kubernetes clusters, built from each cluster's decrypted kubeconfig.

One client per distinct kubeconfig (keyed by its digest, so an edited kubeconfig gets a new
client and no plaintext is kept as a key); what a kubeconfig may hold is agents.backends.kubeconfig's
rule. Imported only where a cluster is called: the kubernetes package weighs about 30 MB in a process.
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager

import urllib3
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from agents.backends.base import BackendError, BackendUnreachable
from agents.backends.kubeconfig import KubeconfigInvalid, configuration_from, parse_kubeconfig

# (connect, read) seconds of one API call; a watch or a followed log passes its own.
API_TIMEOUT = (5, 20)
# A refused connection fails at once; one retry covers a dropped keep-alive connection.
API_RETRIES = 1

_clients: dict[str, k8s.ApiClient] = {}
_clients_lock = threading.Lock()


def api_client(kubeconfig: str) -> k8s.ApiClient:
    """The client of the cluster this kubeconfig names (built once per kubeconfig)."""
    key = hashlib.sha256(kubeconfig.encode()).hexdigest()
    found = _clients.get(key)
    if found is not None:
        return found
    try:
        configuration = configuration_from(parse_kubeconfig(kubeconfig))
    except KubeconfigInvalid as exc:
        raise BackendError(str(exc)) from None
    configuration.retries = API_RETRIES
    built = k8s.ApiClient(configuration)
    with _clients_lock:
        kept = _clients.setdefault(key, built)
    if kept is not built:
        built.close()
    return kept


def status_of(exc: ApiException) -> int:
    return int(exc.status or 0)


@contextmanager
def api_errors(where: str):
    """Translate client and transport failures into the backend errors of base.py. A 404 is left
    to the caller as an ApiException (what is missing differs from call to call)."""
    try:
        yield
    except ApiException as exc:
        if status_of(exc) == 404:
            raise
        reason = (str(exc.reason or "").splitlines() or [""])[0].split(" -+-+- ")[0][:200]
        error = BackendError(f"The Kubernetes API server of {where} refused the request: {exc.status} {reason}")
        error.transient = status_of(exc) == 0 or status_of(exc) >= 500 or status_of(exc) == 429
        raise error from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise BackendUnreachable(f"The Kubernetes API server of {where} cannot be reached.") from exc
