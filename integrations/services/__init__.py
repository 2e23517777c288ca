"""Every write of integrations (docs/api.md "Integrations")."""

from .connections import integration_connect, integration_remove, integration_update
from .oauth import Authorization, oauth_complete, oauth_refresh, oauth_start, refresh_due
from .probes import TestResult, integration_test
from .runtime import SyncResult, desired_env, integration_sync, runtime_state_apply, workload_env

__all__ = [
    "Authorization", "SyncResult", "TestResult", "desired_env", "integration_connect", "integration_remove",
    "integration_sync", "integration_test", "integration_update", "oauth_complete", "oauth_refresh", "oauth_start",
    "refresh_due", "runtime_state_apply", "workload_env",
]
