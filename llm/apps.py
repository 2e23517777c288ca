from django.apps import AppConfig


class LlmConfig(AppConfig):
    """Model providers and their keys. Below agents (which will use it through selectors), above
    accounts and workspaces (keys belong to a user or a workspace)."""

    name = "llm"
    default_auto_field = "django.db.models.BigAutoField"
