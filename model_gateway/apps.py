from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class ModelGatewayConfig(AppConfig):
    """Fleet's model gateway (/llm/v1): a runtime with `modelRouting: gateway` calls its model
    here with its own token; Fleet forwards with the saved key, meters the provider's own usage
    and refuses the call that would cross a hard cap. Above agents (its budgets, usage store
    and models), beside alerts, channels, integrations and sandbox, which it never imports."""

    name = "model_gateway"
    default_auto_field = "django.db.models.BigAutoField"
    periodic_tasks: tuple = (
        PeriodicJob(name="model_gateway: drop lapsed reservations and old traffic",
                    task="model_gateway.tasks.purge", every_seconds=3600, expires_seconds=3000),
    )

    def ready(self):
        from agents.console.page import PageSection, register_page_section
        from agents.internal_url import MODEL_GATEWAY_PATH
        from fleet.edge.routes import register_http, register_shutdown

        from .edge import model_gateway_app
        from .page import TEMPLATE, traffic_card
        from .settle import flush
        from .upstream import close_pool

        # Registries filled once the apps are loaded: the edge's routes, the agent page's cards.
        register_http(MODEL_GATEWAY_PATH, model_gateway_app)
        register_shutdown(flush)  # what the loop still has to settle
        register_shutdown(close_pool)
        register_page_section("model-gateway", PageSection(TEMPLATE, traffic_card))
