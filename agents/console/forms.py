"""Console forms. They only carry values to the services (which validate them as the API
does) and put a service's ValidationFailed back on the fields it names."""

from __future__ import annotations

from django import forms
from unfold.widgets import UnfoldAdminSelectWidget, UnfoldAdminTextInputWidget

from fleet.admin_forms import add_field_errors
from fleet.errors import ValidationFailed

from ..models import DeployTarget, ModelRouting, RuntimeFamily, SandboxProfile

TEXT = UnfoldAdminTextInputWidget
NUMBER_HELP = "Empty: the server's default."


def _choices(choices, *, blank: str) -> list[tuple[str, str]]:
    return [("", blank), *choices]


class ServiceForm(forms.Form):
    # The API's names of fields the form names otherwise ({"model.name": "model_name"}).
    api_field_names: dict[str, str] = {}

    def add_service_errors(self, error: ValidationFailed) -> None:
        """The service's field messages on the form's fields (others on the form itself)."""
        add_field_errors(self, error.fields, self.api_field_names)


MODEL_FIELDS = {"keyId": "model_key", "name": "model_name", "fallbacks": "model_fallbacks"}
ROUTING_HELP = ("Direct: the runtime calls the provider with the key. Through Fleet: it calls Fleet's model "
                "gateway with its own token; the key stays in Fleet, every token is metered and a hard cap "
                "refuses a call before it is made.")
ROUTING_CHOICES = [(ModelRouting.DIRECT, "direct to the provider"), (ModelRouting.GATEWAY, "through Fleet")]


class DeployForm(ServiceForm):
    api_field_names = {**{f"model.{api}": form for api, form in MODEL_FIELDS.items()},
                       "modelRouting": "model_routing"}

    name = forms.CharField(required=False, widget=TEXT, help_text="Empty: a generated name.")
    workspace = forms.ChoiceField(required=False, widget=UnfoldAdminSelectWidget,
                                  help_text="Shared into this workspace as it is deployed; empty: yours alone.")
    runtime_family = forms.ChoiceField(choices=_choices(RuntimeFamily.choices, blank="default (openclaw)"),
                                       required=False, widget=UnfoldAdminSelectWidget)
    deploy_target = forms.ChoiceField(
        choices=_choices([c for c in DeployTarget.choices if c[0] != DeployTarget.EXTERNAL], blank="default (docker)"),
        required=False, widget=UnfoldAdminSelectWidget)
    execution_target_id = forms.ChoiceField(
        required=False, widget=UnfoldAdminSelectWidget, label="Where",
        help_text="The engines, clusters and hosts you may deploy to now; empty: the deploy target's default.")
    sandbox_profile = forms.ChoiceField(choices=_choices(SandboxProfile.choices, blank="default (standard)"),
                                        required=False, widget=UnfoldAdminSelectWidget)
    vcpu = forms.FloatField(required=False, widget=TEXT, help_text=NUMBER_HELP)
    ram_mb = forms.FloatField(required=False, widget=TEXT, label="RAM (MB)", help_text=NUMBER_HELP)
    disk_gb = forms.FloatField(required=False, widget=TEXT, label="Disk (GB)", help_text=NUMBER_HELP)
    model_key = forms.ChoiceField(required=False, widget=UnfoldAdminSelectWidget, label="Model provider key",
                                  help_text="One of your saved keys; empty: the platform default model, if set.")
    model_name = forms.CharField(required=False, widget=TEXT, label="Model",
                                 help_text="The provider's model id, e.g. gpt-4o-mini.")
    model_fallbacks = forms.CharField(required=False, widget=TEXT, label="Fallback models",
                                      help_text="Comma-separated, tried in order when the model fails.")
    model_routing = forms.ChoiceField(choices=_choices(ROUTING_CHOICES, blank="default (DEFAULT_MODEL_ROUTING)"),
                                      required=False, widget=UnfoldAdminSelectWidget, label="Model calls",
                                      help_text=ROUTING_HELP)

    def __init__(self, *args, keys=(), targets=(), workspaces=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_key"].choices = key_choices(keys, blank="none (the platform default)")
        self.fields["execution_target_id"].choices = _choices(targets, blank="the default")
        self.workspaces = {str(workspace.pk): workspace for workspace in workspaces}
        self.fields["workspace"].choices = _choices([(pk, w.name) for pk, w in self.workspaces.items()],
                                                    blank="none")

    def chosen_workspace(self):
        return self.workspaces.get(self.cleaned_data.get("workspace") or "")

    def request_values(self) -> dict:
        """The given fields only, as POST /agents/deploy's body would carry them."""
        values = {name: value for name, value in self.cleaned_data.items()
                  if value not in (None, "") and not name.startswith("model_") and name != "workspace"}
        model = model_value(self.cleaned_data)
        if model is not None:
            values["model"] = model
        if self.cleaned_data.get("model_routing"):
            values["model_routing"] = self.cleaned_data["model_routing"]
        return values


def key_choices(keys, *, blank: str) -> list[tuple[str, str]]:
    """A select's options for saved provider keys (never the key itself)."""
    return _choices([(str(key.pk), f"{key.label} ({key.provider})") for key in keys], blank=blank)


def model_value(data: dict) -> dict | None:
    """`model` as the API's body carries it, from the form's model fields (None: none chosen)."""
    if not data.get("model_key") and not data.get("model_name"):
        return None
    fallbacks = [name.strip() for name in (data.get("model_fallbacks") or "").split(",") if name.strip()]
    return {"keyId": data.get("model_key") or None, "name": data.get("model_name") or None, "fallbacks": fallbacks}


class AgentModelForm(ServiceForm):
    """The agent's model: a saved key the operator may use for it, a model name, fallbacks."""

    api_field_names = {**MODEL_FIELDS, "modelRouting": "model_routing"}
    model_key = forms.ChoiceField(widget=UnfoldAdminSelectWidget, label="Provider key")
    model_name = forms.CharField(widget=TEXT, label="Model", help_text="The provider's model id, e.g. gpt-4o-mini.")
    model_fallbacks = forms.CharField(required=False, widget=TEXT, label="Fallback models",
                                      help_text="Comma-separated, tried in order when the model fails.")
    model_routing = forms.ChoiceField(choices=ROUTING_CHOICES, required=False, widget=UnfoldAdminSelectWidget,
                                      label="Model calls", help_text=ROUTING_HELP)

    def __init__(self, *args, keys=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["model_key"].choices = key_choices(keys, blank="choose a key")


class ResourcesForm(ServiceForm):
    vcpu = forms.FloatField(widget=TEXT, label="vCPU")
    ram_mb = forms.FloatField(widget=TEXT, label="RAM (MB)")
    disk_gb = forms.FloatField(widget=TEXT, label="Disk (GB)")
    sandbox_profile = forms.ChoiceField(choices=SandboxProfile.choices, widget=UnfoldAdminSelectWidget)
