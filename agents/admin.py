"""Admin registrations of the agents app live beside their features; autodiscovery loads this."""

from .budgets import admin as budgets_admin  # noqa: F401
from .usage import admin as usage_admin  # noqa: F401
