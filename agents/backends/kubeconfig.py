"""Reading a registered cluster's kubeconfig: YAML, self-contained (credentials and
certificates inline, `*-data` and `token`), no file paths and no `exec`/`auth-provider` plugins,
which would read files of, or run programs on, the control plane's host.

Its shapes are checked before anything reads it (lists of named entries whose bodies are
mappings, a current context naming them), so a malformed one is a KubeconfigInvalid, never a
crash. `check_kubeconfig` (registering or changing a cluster) also passes every cluster's
`server` and `proxy-url` through fleet.netsafety's outbound rule, the adopt rule (`paas`: public
addresses only; self-hosted also private networks; loopback, link-local and metadata never
unless OUTBOUND_ALLOWED_HOSTS names them).
"""

from __future__ import annotations

import yaml
from django.conf import settings

from fleet import netsafety

_FILE_KEYS = {
    "clusters": ("certificate-authority",),
    "users": ("client-certificate", "client-key", "tokenFile", "token-file"),
}
_PLUGIN_KEYS = ("exec", "auth-provider")
_SECTIONS = (("clusters", "cluster"), ("users", "user"), ("contexts", "context"))
_URL_KEYS = ("server", "proxy-url")


class KubeconfigInvalid(ValueError):
    """The kubeconfig cannot be used; the message says why (it never quotes the kubeconfig)."""


def parse_kubeconfig(text: str) -> dict:
    """The kubeconfig as a dict, checked: YAML, a current context that names a cluster and a
    user, everything inline. KubeconfigInvalid otherwise."""
    try:
        data = yaml.safe_load(text or "") if isinstance(text, str) else None
    except yaml.YAMLError:
        raise KubeconfigInvalid("The kubeconfig is not valid YAML.") from None
    if not isinstance(data, dict) or not data.get("clusters") or not data.get("contexts"):
        raise KubeconfigInvalid("The kubeconfig needs clusters, users and contexts.")
    entries = {section: _entries(data, section, body_key) for section, body_key in _SECTIONS}
    _check_current_context(data, entries)
    for section, keys in _FILE_KEYS.items():
        for body in entries[section].values():
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
    configuration_from(data)  # the client's own reading of it last
    return data


def configuration_from(data: dict):
    """The kubernetes client's configuration of a parsed kubeconfig; KubeconfigInvalid when the
    client cannot read it."""
    # Lazy client loading: the kubernetes package weighs about 30 MB in a process, so it is
    # imported where a kubeconfig is read, never at a web worker's start.
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    try:
        config.load_kube_config_from_dict(data, client_configuration=configuration, persist_config=False)
    except (ConfigException, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise KubeconfigInvalid(f"The kubeconfig cannot be used: {_first_line(exc)}") from None
    return configuration


def check_kubeconfig(text: str) -> dict:
    """A kubeconfig a cluster may be registered with: parse_kubeconfig's rules, and every URL it
    would have Fleet connect to (each cluster's `server` and `proxy-url`) an allowed outbound
    destination. KubeconfigInvalid otherwise."""
    data = parse_kubeconfig(text)
    for entry in data["clusters"]:
        _check_urls(entry["name"], entry["cluster"])
    return data


def _entries(data: dict, section: str, body_key: str) -> dict[str, dict]:
    """name -> body of a section: a list of {name: <string>, <body_key>: <mapping>}."""
    items = data.get(section)
    if items is None:
        return {}
    if not isinstance(items, list):
        raise KubeconfigInvalid(f"The kubeconfig's {section} must be a list of named entries.")
    found: dict[str, dict] = {}
    for entry in items:
        name = entry.get("name") if isinstance(entry, dict) else None
        body = entry.get(body_key) if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or not isinstance(body, dict):
            raise KubeconfigInvalid(f"Each of the kubeconfig's {section} needs a name and a {body_key} mapping.")
        found[name] = body
    return found


def _check_current_context(data: dict, entries: dict[str, dict[str, dict]]) -> None:
    """The current context exists and names a cluster and a user the kubeconfig has."""
    current = data.get("current-context")
    if not isinstance(current, str) or current not in entries["contexts"]:
        raise KubeconfigInvalid("The kubeconfig's current-context must name one of its contexts.")
    context = entries["contexts"][current]
    if context.get("cluster") not in entries["clusters"]:
        raise KubeconfigInvalid("The current context's cluster is not among the kubeconfig's clusters.")
    user = context.get("user")
    if user is not None and user not in entries["users"]:
        raise KubeconfigInvalid("The current context's user is not among the kubeconfig's users.")
    namespace = context.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise KubeconfigInvalid("The current context's namespace must be a string.")


def _check_urls(name: str, cluster: dict) -> None:
    """Each URL a cluster entry would have Fleet connect to passes the outbound rule."""
    for key in _URL_KEYS:
        url = cluster.get(key)
        if key == "proxy-url" and url in (None, ""):
            continue
        try:
            netsafety.check_url(url, allow_private=settings.PLATFORM_MODE != "paas")
        except netsafety.UnsafeTarget as exc:
            raise KubeconfigInvalid(f"The {key} of the kubeconfig's cluster {name!r} is refused: {exc}") from None


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
