"""Every model the console registers opens on the theme: its list, and its add form where adding
is allowed (a template the theme cannot render would be a 500 here)."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from fleet.admin_base import ModelAdmin as ThemedModelAdmin
from fleet.admin_base import StackedInline as ThemedStackedInline
from fleet.admin_base import TabularInline as ThemedTabularInline
from tests.factories.accounts import AdminFactory

pytestmark = pytest.mark.django_db

REGISTERED = sorted((model._meta.app_label, model._meta.model_name) for model in admin.site._registry)


@pytest.mark.parametrize(("app_label", "model_name"), REGISTERED)
def test_the_list_and_the_add_form_render(app_label, model_name, rf):
    admin_user = AdminFactory()
    client = Client()
    client.force_login(admin_user)
    model_admin = next(a for m, a in admin.site._registry.items()
                       if (m._meta.app_label, m._meta.model_name) == (app_label, model_name))

    listing = client.get(reverse(f"admin:{app_label}_{model_name}_changelist"))
    assert listing.status_code == 200

    request = rf.get("/")
    request.user = admin_user
    if model_admin.has_add_permission(request):
        assert client.get(reverse(f"admin:{app_label}_{model_name}_add")).status_code == 200


OWN_PACKAGES = {"accounts", "agents", "alerts", "channels", "console", "fleet", "integrations", "llm", "sandbox",
                "workspaces"}
OWN = sorted((m._meta.app_label, m._meta.model_name) for m, a in admin.site._registry.items()
             if type(a).__module__.partition(".")[0] in OWN_PACKAGES)


@pytest.mark.parametrize(("app_label", "model_name"), OWN)
def test_every_admin_of_fleet_and_its_inlines_use_the_consoles_theme(app_label, model_name):
    model_admin = next(a for m, a in admin.site._registry.items()
                       if (m._meta.app_label, m._meta.model_name) == (app_label, model_name))
    assert isinstance(model_admin, ThemedModelAdmin)
    for inline in model_admin.inlines:
        assert issubclass(inline, (ThemedTabularInline, ThemedStackedInline)), inline


def test_the_sidebar_has_a_targets_group_with_hosts_clusters_and_grants():
    client = Client()
    client.force_login(AdminFactory())

    page = client.get(reverse("admin:index")).content.decode()

    targets = page[page.index("Targets"):]
    for name in ("targets_remotehost_changelist", "targets_k8scluster_changelist", "targets_targetgrant_changelist"):
        assert f'href="{reverse(f"admin:{name}")}"' in targets
    assert "Remote Docker hosts" in targets and "Kubernetes clusters" in targets
