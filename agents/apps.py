from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_delete

from fleet.periodic import PeriodicJob

from .budgets.periodic import BUDGET_PERIODIC_TASKS
from .stats.periodic import STATS_PERIODIC_TASKS
from .usage.periodic import USAGE_PERIODIC_TASKS


class AgentsConfig(AppConfig):
    name = "agents"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat, installed by `manage.py setup_periodic_tasks`.
    periodic_tasks: tuple = (
        PeriodicJob(
            name="agents: monitor running agents",
            task="agents.tasks.monitor_agents",
            every_seconds=30,
            expires_seconds=25,  # a late sweep is dropped: the next one is due anyway
        ),
        PeriodicJob(
            name="agents: take over deploys whose job was lost",
            task="agents.tasks.reconcile_deploys",
            every_seconds=60,
            expires_seconds=55,
        ),
        PeriodicJob(
            name="agents: probe engines and targets",
            task="agents.tasks.probe_engines",
            every_seconds=30,
            expires_seconds=25,
        ),
        PeriodicJob(
            name="agents: drop expired migration drafts",
            task="agents.tasks.expire_migration_drafts",
            every_seconds=3600,
            expires_seconds=3000,
        ),
        PeriodicJob(
            name="agents: drop expired deploy idempotency keys",
            task="agents.tasks.expire_idempotency_keys",
            every_seconds=3600,
            expires_seconds=3000,
        ),
    ) + STATS_PERIODIC_TASKS + BUDGET_PERIODIC_TASKS + USAGE_PERIODIC_TASKS

    def ready(self):
        from accounts.deletion import user_holder_register
        from fleet.health import health_check_register, health_warning_register

        from . import checks  # noqa: F401 - registers the system checks
        from .list_revisions import install_after_migrate as install_revisions_after_migrate
        from .list_triggers import install_after_migrate
        from .services.lifecycle import agents_holding

        user_holder_register(agents_holding)  # a user who owns agents is deleted after them

        from audit.scopes import register_target_workspaces

        from .selectors import agent_workspace_ids

        # An agent's changes are in the audit log of every workspace it is assigned to.
        register_target_workspaces(path_param="agent_id", target_types=("agent", "agents.agent"),
                                   workspaces_of=agent_workspace_ids)

        from .services.engine_probe import engines_report
        from .services.workload import internal_url_warning

        # The list version's triggers, re-created when missing or outdated (SQLite drops them
        # with a rebuilt table): agents.list_triggers.
        post_migrate.connect(install_after_migrate, sender=self, dispatch_uid="agents.list_triggers")
        # Each agent's list revision (agents.list_revisions), under which agents.list_rows keeps rows.
        post_migrate.connect(install_revisions_after_migrate, sender=self, dispatch_uid="agents.list_revisions")

        from fleet.edge.routes import register_websocket

        from .terminal.socket import PATH_PATTERN, terminal_socket

        register_websocket(PATH_PATTERN, terminal_socket)  # the terminal, routed before Django

        from .backends.registry import names_registered_target

        # checks.engines of /api/health; registered targets (a user's remote:<id>) by name to platform admins only
        health_check_register("engines", engines_report, private_item=names_registered_target)

        from fleet.edge.routes import register_host, register_shutdown

        from .gateway.async_http import close_pool
        from .proxy.app import proxy_application
        from .proxy.hosts import is_proxy_host

        register_host(is_proxy_host, proxy_application)  # every agent's UI on its own origin
        register_shutdown(close_pool)  # the gateways' connection pool, closed with its loop
        health_warning_register("internal_url", lambda: getattr(internal_url_warning(), "sentence", None))
        from fleet import events
        from llm.signals import key_changed

        from .budgets import tasks as budget_tasks  # noqa: F401 - registers the budget tasks
        from .llm_model import services as llm_model
        from .llm_model import tasks as llm_model_tasks  # noqa: F401 - registers agents.apply_model
        from .stats import tasks  # noqa: F401 - registers the stats tasks (autodiscovery finds agents.tasks only)
        from .usage import tasks as usage_tasks  # noqa: F401 - registers the usage pull

        events.subscribe(llm_model.on_event)  # a runtime that came up gets its model
        key_changed.connect(llm_model.on_key_changed, dispatch_uid="agents.llm_model.key_changed")
        pre_delete.connect(llm_model.on_key_deleted, sender="llm.ProviderKey",
                           dispatch_uid="agents.llm_model.key_deleted")
