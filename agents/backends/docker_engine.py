"""The door to one Docker engine that the Docker backend and its parts (state files, logs) share:
one client per engine, the engine's failures as the backend's errors, the state volume's name
and the user a container runs as. No import back from agents.backends.docker."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from contextlib import contextmanager

import docker
import requests
import urllib3
from docker import errors as docker_errors

from agents.backends.base import BackendError, BackendUnreachable, WorkloadMissing

API_TIMEOUT = 15  # seconds for one engine call; docker-py adds the stop timeout to stop calls

_clients: dict[str, docker.DockerClient] = {}
# Engines docker-py cannot reach by itself (Remote Docker over a pinned SSH connection): the
# function that builds the client of each such host string (engine_client_builder_register).
_client_builders: dict[str, Callable[[], docker.DockerClient]] = {}
_engine_info: dict[str, dict] = {}
_clients_lock = threading.Lock()
@contextmanager
def engine_errors(host: str):
    """Translate docker-py and transport failures into the backend errors of base.py."""
    try:
        yield
    except docker_errors.ImageNotFound as exc:
        raise BackendError(f"The Docker engine has no such image: {exc.explanation}") from exc
    except docker_errors.NotFound as exc:
        raise WorkloadMissing(f"The container no longer exists: {exc.explanation}") from exc
    except docker_errors.APIError as exc:
        raise engine_refusal(exc) from exc
    except (
        requests.exceptions.ConnectionError,
        requests.exceptions.Timeout,
        urllib3.exceptions.HTTPError,
        docker_errors.DockerException,
    ) as exc:
        why = _transport_failure(exc)
        detail = f": {why}" if why else "."
        raise BackendUnreachable(f"The Docker engine at {host} cannot be reached{detail}") from exc


# Refusals an engine answers with a 500 that no retry mends, by the engine's own words, each with
# what to do. An engine without bridge networking (docker0 gone, or never made) refuses every
# container on the default network when it starts it.
UNMENDABLE_REFUSALS = {
    "could not find bridge": "The engine has no bridge network: set DOCKER_NETWORK_MODE=host to run agents on "
                             "the host network.",
    "no such network interface": "A network interface the engine needs is missing: with no bridge network, set "
                                 "DOCKER_NETWORK_MODE=host.",
    "network bridge not found": "The engine has no bridge network: set DOCKER_NETWORK_MODE=host.",
}


def engine_refusal(exc: docker_errors.APIError, *, what: str = "refused the request") -> BackendError:
    """The backend error of an engine's refusal ("The Docker engine <what>: <its words>"):
    transient when the engine failed (a 5xx, no answer), unless its words say the refusal is for
    good (UNMENDABLE_REFUSALS: with the fix)."""
    explanation = str(exc.explanation or exc)
    fix = next((fix for words, fix in UNMENDABLE_REFUSALS.items() if words in explanation.lower()), None)
    error = BackendError(f"The Docker engine {what}: {explanation}" + (f" {fix}" if fix else ""))
    error.transient = fix is None and (exc.status_code is None or exc.status_code >= 500)
    return error


def _transport_failure(exc: BaseException) -> BackendUnreachable | None:
    """The reason a custom transport gave under docker-py (Remote Docker's SSH failures: a
    refused sign-in, a changed host key), found in the exception's chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, BackendUnreachable):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def engine_client(host: str) -> docker.DockerClient:
    """One client per engine, built on first use (API version negotiated with the daemon).
    Built outside the lock: a slow engine must not hold up calls to the others."""
    client = _clients.get(host)
    if client is not None:
        return client
    build = _client_builders.get(host)
    with engine_errors(host):
        client = build() if build else docker.DockerClient(base_url=host, version="auto", timeout=API_TIMEOUT)
    with _clients_lock:
        kept = _clients.setdefault(host, client)
    if kept is not client:
        client.close()  # another thread won the race; keep one connection pool per engine
    return kept


def engine_client_builder_register(host: str, build: Callable[[], docker.DockerClient]) -> None:
    """Have engine_client(host) use `build()` (called on first use) rather than docker-py's own
    transport for `host`: a backend reusing DockerBackend over another transport."""
    _client_builders[host] = build


def engine_client_drop(host: str) -> None:
    """Forget (and close) the client and builder of `host`: its connection details changed."""
    with _clients_lock:
        client = _clients.pop(host, None)
        _client_builders.pop(host, None)
        _engine_info.pop(host, None)
    if client is not None:
        client.close()


def engine_info(host: str, client: docker.DockerClient) -> dict:
    """The engine's name and CPU count, read once per engine."""
    if host not in _engine_info:
        with engine_errors(host):
            info = client.info()
        engine_info_record(host, info)
    return _engine_info[host]


def engine_info_known(host: str) -> dict | None:
    """engine_info() of `host` if it was read already (for a reader that asks without docker-py)."""
    return _engine_info.get(host)


def engine_info_record(host: str, info: dict) -> dict:
    """Keep what engine_info() answers from the engine's `/info` answer `info`."""
    _engine_info[host] = {"name": info.get("Name", ""), "cpus": info.get("NCPU") or 1}
    return _engine_info[host]


def state_volume_name(agent_id: str) -> str:
    # The whole id, not the container name's 12 characters: two agents must never share state.
    return f"fleet-agent-{uuid.UUID(str(agent_id)).hex}-state"


def image_user(attrs: dict) -> tuple[int, int]:
    """The numeric uid and gid the container runs as ("10001:10001"); root when unnamed."""
    user = ((attrs.get("Config") or {}).get("User") or "").strip()
    uid, _, gid = user.partition(":")
    uid = int(uid) if uid.isdigit() else 0
    return uid, int(gid) if gid.isdigit() else uid
