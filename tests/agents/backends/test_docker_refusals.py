"""The engine's refusals as backend errors: a 5xx is worth retrying unless the engine's words say
no retry mends it, as on an engine without bridge networking (the first-hour wall: five retries
over 2.5 minutes, then `error`). This machine's engine runs without a bridge (--bridge=none) and
so never answers this refusal: its answer is built here from the engine's own words."""

from __future__ import annotations

import pytest
import requests
from docker import errors as docker_errors

from agents.backends.base import BackendError
from agents.backends.docker_engine import engine_errors, engine_refusal

NO_DOCKER0 = ("failed to create endpoint fleet-a on network bridge: adding interface veth1a2b3c to bridge "
              "docker0 failed: could not find bridge docker0: route ip+net: no such network interface")


def _refusal(status: int | None, explanation: str) -> docker_errors.APIError:
    response = None
    if status is not None:
        response = requests.Response()
        response.status_code = status
    return docker_errors.APIError("engine refusal", response=response, explanation=explanation)


def test_a_missing_bridge_is_refused_for_good_with_what_to_set():
    error = engine_refusal(_refusal(500, NO_DOCKER0))

    assert error.transient is False
    assert "could not find bridge docker0" in str(error) and "DOCKER_NETWORK_MODE=host" in str(error)


@pytest.mark.parametrize(("status", "transient"), [(500, True), (503, True), (None, True), (400, False),
                                                   (409, False)])
def test_other_refusals_are_transient_when_the_engine_failed(status, transient):
    error = engine_refusal(_refusal(status, "something went wrong"))

    assert error.transient is transient and "DOCKER_NETWORK_MODE" not in str(error)


def test_the_engine_door_raises_it():
    with pytest.raises(BackendError) as caught, engine_errors("unix:///run/docker.sock"):
        raise _refusal(500, NO_DOCKER0)

    assert caught.value.transient is False
