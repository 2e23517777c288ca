"""API clients of registered Kubernetes clusters, built from each cluster's decrypted kubeconfig.

One client per distinct kubeconfig (keyed by its digest, so an edited kubeconfig gets a new
client and no plaintext is kept as a key). A kubeconfig must be self-contained: credentials
and certificates inline (`*-data`, `token`), no file paths and no `exec`/`auth-provider`
plugins, which would read files of, or run programs on, the control plane's host.
"""

from __future__ import annotations

import hashlib
import threading
from contextlib import contextmanager

import urllib3
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException

from agents.backends.base import BackendError, BackendUnreachable

# (connect, read) seconds of one API call; a watch or a followed log passes its own.
API_TIMEOUT = (5, 20)
# A refused connection fails at once; one retry covers a dropped keep-alive connection.
API_RETRIES = 1

_FILE_KEYS = {
    "clusters": ("certificate-authority",),
    "users": ("client-certificate", "client-key", "tokenFile", "token-file"),
}
_PLUGIN_KEYS = ("exec", "auth-provider")

_clients: dict[str, k8s.ApiClient] = {}
_clients_lock = threading.Lock()


class KubeconfigInvalid(ValueError):
    """The kubeconfig cannot be used; the message says why (it never quotes the kubeconfig)."""


def parse_kubeconfig(text: str) -> dict:
    """The kubeconfig as a dict, checked: YAML, a current context that names a cluster and a
    user, everything inline. KubeconfigInvalid otherwise."""
    try:
        data = yaml.safe_load(text or "")
    except yaml.YAMLError:
        raise KubeconfigInvalid("The kubeconfig is not valid YAML.") from None
    if not isinstance(data, dict) or not data.get("clusters") or not data.get("contexts"):
        raise KubeconfigInvalid("The kubeconfig needs clusters, users and contexts.")
    for section, keys in _FILE_KEYS.items():
        for entry in data.get(section) or []:
            body = (entry or {}).get(section[:-1]) or {}
            if not isinstance(body, dict):
                raise KubeconfigInvalid(f"The kubeconfig's {section} entries are malformed.")
            named = [key for key in keys if body.get(key)]
            if named:
                raise KubeconfigInvalid(
                    f"The kubeconfig refers to files ({', '.join(named)}); put the content inline (the *-data keys)."
                )
            plugins = [key for key in _PLUGIN_KEYS if body.get(key)]
            if plugins:
                raise KubeconfigInvalid(
                    f"The kubeconfig uses {', '.join(plugins)} credentials, which would run programs on the "
                    "control plane; use a service-account token or a client certificate."
                )
    try:
        configuration_from(data)
    except (ConfigException, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise KubeconfigInvalid(f"The kubeconfig cannot be used: {_first_line(exc)}") from None
    return data


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def configuration_from(data: dict) -> k8s.Configuration:
    configuration = k8s.Configuration()
    k8s_config.load_kube_config_from_dict(data, client_configuration=configuration, persist_config=False)
    configuration.retries = API_RETRIES
    return configuration


def api_client(kubeconfig: str) -> k8s.ApiClient:
    """The client of the cluster this kubeconfig names (built once per kubeconfig)."""
    key = hashlib.sha256(kubeconfig.encode()).hexdigest()
    found = _clients.get(key)
    if found is not None:
        return found
    try:
        built = k8s.ApiClient(configuration_from(parse_kubeconfig(kubeconfig)))
    except KubeconfigInvalid as exc:
        raise BackendError(str(exc)) from None
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
