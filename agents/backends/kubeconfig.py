"""Reading a registered cluster's kubeconfig: YAML, self-contained (credentials and
certificates inline, `*-data` and `token`), no file paths and no `exec`/`auth-provider` plugins,
which would read files of, or run programs on, the control plane's host.
"""

from __future__ import annotations

import yaml

_FILE_KEYS = {
    "clusters": ("certificate-authority",),
    "users": ("client-certificate", "client-key", "tokenFile", "token-file"),
}
_PLUGIN_KEYS = ("exec", "auth-provider")


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
    # The client's own reading of it last (the kubernetes package, about 30 MB in a process, is
    # imported only here and where a cluster is called).
    from kubernetes.config.config_exception import ConfigException

    from .kubernetes_client import configuration_from

    try:
        configuration_from(data)
    except (ConfigException, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise KubeconfigInvalid(f"The kubeconfig cannot be used: {_first_line(exc)}") from None
    return data


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
