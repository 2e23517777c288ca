"""Every model the console registers opens on the theme: its list, and its add form where adding
is allowed (a template the theme cannot render would be a 500 here)."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

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
