"""The files API and exports deny HOME's credential stores by path, not only
the runtime's own secrets by name: a viewer read `home/.git-credentials` and `exec-approvals.json`
(a socket token). The rule is agents.files.bundle.is_secret_path; the files API's refusal of
such paths over a real container is tested in tests/agents/files/test_files_api.py."""

from __future__ import annotations

import pytest

from agents.files.bundle import is_secret_path

STORES = [
    "home/.git-credentials", "exec-approvals.json", "home/.netrc", "home/.npmrc", "home/.pypirc",
    "home/.pgpass", "home/.config/gh/hosts.yml", "home/.docker/config.json", "home/.kube/config",
    "home/.kube/cache/discovery/x.json", "home/.aws/credentials", "home/.config/gcloud/credentials.db",
    "home/.gnupg/private-keys-v1.d/abc.key", "home/.gnupg/pubring.kbx", ".config/gh/hosts.yml",
    "config.yaml",  # Hermes's, at the state folder's root: the model's key (agents.llm_model.runtime)
]
NOT_SECRET = ["workspace/config.json", "workspace/hosts.yml", "home/.docker/contexts/meta.json",
              "home/.config/other/hosts.yml", "gh/hosts.yml", "home/notes/netrc.md", "memory/2026-11-28.md",
              "workspace/config.yaml"]


@pytest.mark.parametrize("path", STORES)
def test_credential_stores_under_home_are_secret(path):
    assert is_secret_path(path)


@pytest.mark.parametrize("path", NOT_SECRET)
def test_look_alikes_elsewhere_are_not(path):
    assert not is_secret_path(path)
