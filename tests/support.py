"""The vocabulary the tests of every app share: callers, real services, waiting."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

import pytest
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue

T = TypeVar("T")

IN_CI = os.environ.get("CI", "").lower() == "true"


def need_service(available: bool, reason: str) -> None:
    """Skip a test whose real service is missing; under CI=true, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required service missing under CI: {reason}")
    pytest.skip(reason)


def client_for(user=None, *, api_key: str | None = None, header: str = "X-Api-Key") -> APIClient:
    """An APIClient carrying a Bearer session for `user`, or an API key in `header`."""
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=user)}")
    if api_key is not None:
        meta = "HTTP_" + header.upper().replace("-", "_")
        client.credentials(**{meta: api_key})
    return client


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.1) -> T:
    """Poll `predicate` until it returns something truthy and return that; fail on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout}s: {predicate}")
        time.sleep(interval)
