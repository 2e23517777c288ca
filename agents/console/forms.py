"""Console forms. They only carry values to the services (which validate them as the API
does) and put a service's ValidationFailed back on the fields it names."""

from __future__ import annotations

from django import forms
from unfold.widgets import UnfoldAdminSelectWidget, UnfoldAdminTextInputWidget

from fleet.errors import ValidationFailed

from ..models import DeployTarget, RuntimeFamily, SandboxProfile

TEXT = UnfoldAdminTextInputWidget
NUMBER_HELP = "Empty: the server's default."


def _choices(choices, *, blank: str) -> list[tuple[str, str]]:
    return [("", blank), *choices]


class ServiceForm(forms.Form):
    def add_service_errors(self, error: ValidationFailed) -> None:
        """The service's field messages on the form's fields (others on the form itself)."""
        for field, messages in error.fields.items():
            for message in messages:
                self.add_error(field if field in self.fields else None, message)


class DeployForm(ServiceForm):
    name = forms.CharField(required=False, widget=TEXT, help_text="Empty: a generated name.")
    runtime_family = forms.ChoiceField(choices=_choices(RuntimeFamily.choices, blank="default (openclaw)"),
                                       required=False, widget=UnfoldAdminSelectWidget)
    deploy_target = forms.ChoiceField(
        choices=_choices([c for c in DeployTarget.choices if c[0] != DeployTarget.EXTERNAL], blank="default (docker)"),
        required=False, widget=UnfoldAdminSelectWidget)
    execution_target_id = forms.CharField(
        required=False, widget=TEXT, help_text="A host or cluster (remote:<id>, k8s:<id>) when the target needs one.")
    sandbox_profile = forms.ChoiceField(choices=_choices(SandboxProfile.choices, blank="default (standard)"),
                                        required=False, widget=UnfoldAdminSelectWidget)
    vcpu = forms.FloatField(required=False, widget=TEXT, help_text=NUMBER_HELP)
    ram_mb = forms.FloatField(required=False, widget=TEXT, label="RAM (MB)", help_text=NUMBER_HELP)
    disk_gb = forms.FloatField(required=False, widget=TEXT, label="Disk (GB)", help_text=NUMBER_HELP)

    def request_values(self) -> dict:
        """The given fields only, as POST /agents/deploy's body would carry them."""
        return {name: value for name, value in self.cleaned_data.items() if value not in (None, "")}


class ResourcesForm(ServiceForm):
    vcpu = forms.FloatField(widget=TEXT, label="vCPU")
    ram_mb = forms.FloatField(widget=TEXT, label="RAM (MB)")
    disk_gb = forms.FloatField(widget=TEXT, label="Disk (GB)")
    sandbox_profile = forms.ChoiceField(choices=SandboxProfile.choices, widget=UnfoldAdminSelectWidget)
