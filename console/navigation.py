"""The console's sidebar (UNFOLD["SIDEBAR"]["navigation"]) and its stylesheet: what operators
look after, in the order they look; everything else stays under "all applications"."""

from __future__ import annotations

from django.templatetags.static import static
from django.urls import reverse_lazy


def stylesheet(request) -> str:
    return static("console/console.css")


def favicon(request) -> str:
    return static("console/favicon.svg")


def _item(title: str, icon: str, url_name: str) -> dict:
    return {"title": title, "icon": icon, "link": reverse_lazy(url_name),
            "permission": lambda request: request.user.is_staff}


def sidebar(request) -> list[dict]:
    return [
        {"title": "Fleet", "separator": False, "items": [
            _item("Dashboard", "dashboard", "admin:index"),
            _item("Agents", "smart_toy", "admin:agents_agent_changelist"),
            _item("Budgets", "savings", "admin:agents_budget_changelist"),
            _item("Events", "timeline", "admin:fleet_event_changelist"),
            _item("Terminal sessions", "terminal", "admin:agents_terminalsession_changelist"),
        ]},
        {"title": "People", "separator": True, "items": [
            _item("Users", "person", "admin:accounts_user_changelist"),
            _item("Workspaces", "workspaces", "admin:workspaces_workspace_changelist"),
            _item("API keys", "key", "admin:workspaces_apikey_changelist"),
            _item("User groups", "group", "admin:accounts_usergroup_changelist"),
        ]},
        {"title": "Targets", "separator": True, "items": [
            _item("Remote Docker hosts", "dns", "admin:targets_remotehost_changelist"),
            _item("Kubernetes clusters", "hub", "admin:targets_k8scluster_changelist"),
            _item("Target grants", "verified_user", "admin:targets_targetgrant_changelist"),
        ]},
        {"title": "Alerts", "separator": True, "items": [
            _item("Alert rules", "notifications", "admin:alerts_alertrule_changelist"),
            _item("Deliveries", "send", "admin:alerts_delivery_changelist"),
        ]},
    ]
