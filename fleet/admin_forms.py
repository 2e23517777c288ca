"""Console forms that do what the API does, with the API's own checks and writes: the route's input
serializer checks the values, the route's service stores them, and what either refuses lands on
the field it names. The console never has a second code path.

    class BudgetForm(ServiceForm):
        api_input = BudgetInput                  # the route's serializer
        def apply(self, data, api): ...          # the route's service; returns the stored row

    @admin.register(Budget)
    class BudgetAdmin(ServiceFormAdmin): form = BudgetForm
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from rest_framework import serializers
from unfold.widgets import UnfoldAdminTextareaWidget

from .admin_base import ModelAdmin
from .api.errors import field_errors
from .errors import FleetError, ValidationFailed


def add_field_errors(form: forms.BaseForm, fields: dict[str, list[str]], names: dict[str, str]) -> None:
    """Each message of an API field map ({"channels.0.url": [...]}) on the form field that holds
    that value: the name's own (`names` maps the API's names to the form's where they differ),
    else its first part's, prefixed with the rest ("0.url: ..."); else on the form itself."""
    for name, problems in fields.items():
        head, _, rest = name.partition(".")
        if names.get(name, name) in form.fields:
            field, prefix = names.get(name, name), ""
        elif names.get(head, head) in form.fields:
            field, prefix = names.get(head, head), rest
        else:
            field, prefix = None, "" if name == "non_field_errors" else name
        for problem in problems:
            form.add_error(field, f"{prefix}: {problem}" if prefix else problem)


def api_json_field(help_text: str, *, required: bool = False) -> forms.JSONField:
    """A value the API takes as JSON (a channel's config, a rule's channels), edited as the API
    writes it; its secrets read back as "[REDACTED]", which the services keep."""
    return forms.JSONField(required=required, help_text=help_text,
                           widget=UnfoldAdminTextareaWidget(attrs={"rows": 5}))


class ServiceForm(forms.ModelForm):
    api_input: type[serializers.Serializer] | None = None
    api_field_names: dict[str, str] = {}  # the API's name of a value -> the form field, where they differ
    fixed_on_change: tuple[str, ...] = ()  # what a change may not alter (its owner, its kind): shown, disabled

    def __init__(self, *args, acting_user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.acting_user = acting_user
        self.saved = None
        if not self.adding:
            for name in self.fixed_on_change:
                self.fields[name].disabled = True

    @property
    def adding(self) -> bool:
        return self.instance._state.adding

    def api_data(self, data: dict) -> dict:
        """The API body these cleaned values make (a form reshapes what the API names otherwise)."""
        api_names = {form: api for api, form in self.api_field_names.items()}
        return {api_names.get(name, name): value for name, value in data.items() if value is not None}

    def apply(self, data: dict, api: serializers.Serializer | None):
        """Store through the service: `data` is the form's cleaned values, `api` the valid input
        serializer (None without `api_input`). Returns the stored row."""
        raise NotImplementedError

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            api = None
            if self.api_input is not None:
                api = self.api_input(data=self.api_data(data))
                if not api.is_valid():
                    raise ValidationFailed(field_errors(api.errors))
            # The admin's request is one transaction: a later failure undoes this write.
            self.saved = self.apply(data, api)
        except ValidationFailed as exc:
            add_field_errors(self, exc.fields, self.api_field_names)
        except FleetError as exc:
            self.add_error(None, exc.message)
        return data

    def _post_clean(self):
        """Nothing: the service checked and stored the row; the model's own checks would take the
        row it just stored for a duplicate."""


class ServiceFormAdmin(ModelAdmin):
    """The admin of a ServiceForm: the form gets the signed-in user and stores the row itself; the
    add page shows the form's fields, a change page the read-only ones after them; a delete goes
    through `remove` (the route's delete service) when the admin defines it, its refusal said."""

    def get_fields(self, request, obj=None):
        fields = list(self.form.Meta.fields)
        return [*fields, *self.readonly_fields] if obj else fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)

        class WithActingUser(form):
            def __init__(self, *args, **inner):
                super().__init__(*args, acting_user=request.user, **inner)

        return WithActingUser

    def save_form(self, request, form, change):
        return form.saved  # stored by the service in the form's clean()

    def save_model(self, request, obj, form, change):
        pass

    def save_related(self, request, form, formsets, change):
        pass

    remove = None  # (self, obj) -> None: the route's delete service

    def delete_model(self, request, obj):
        if self.remove is None:
            return super().delete_model(request, obj)
        try:
            self.remove(obj)
        except FleetError as exc:
            self.message_user(request, f"{obj}: {exc.message}", messages.ERROR)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)
