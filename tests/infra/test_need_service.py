import pytest

import tests.support as support
from tests.support import need_service


def test_an_available_service_lets_the_test_run():
    assert need_service(True, "redis") is None


def test_a_missing_service_skips_the_test_outside_ci(monkeypatch):
    monkeypatch.setattr(support, "IN_CI", False)

    with pytest.raises(pytest.skip.Exception, match="no redis here"):
        need_service(False, "no redis here")


def test_a_missing_service_fails_the_test_under_ci(monkeypatch):
    monkeypatch.setattr(support, "IN_CI", True)

    with pytest.raises(pytest.fail.Exception, match="required service missing under CI: no redis"):
        need_service(False, "no redis")
