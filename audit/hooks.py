"""What the audit app connects when it is ready: the API's write recorder and the console's
sign-in signals (Django's: the admin signs in with django.contrib.auth, the API does not)."""

from __future__ import annotations

from django.contrib.auth import signals

from fleet.api.writes import register_write_recorder
from fleet.commands import register_command_recorder

from .actors import actor_of_request
from .models import Source
from .requests import record_api_write
from .scopes import workspaces_of_path
from .services import audit_record


def _logged_in(sender, request, user, **kwargs):
    audit_record(action="console.login", source=Source.SIGN_IN, actor=actor_of_request(request),
                 target_type="user", target_id=user.pk)


def _logged_out(sender, request, user, **kwargs):
    if user is not None:
        audit_record(action="console.logout", source=Source.SIGN_IN, actor=actor_of_request(request),
                     target_type="user", target_id=user.pk)


def _login_failed(sender, credentials, request=None, **kwargs):
    tried = str(credentials.get("username") or credentials.get("email") or "")  # Django masks the password
    audit_record(action="console.login", source=Source.SIGN_IN,
                 actor=actor_of_request(request, tried=tried),
                 result="invalid_credentials", target_type="user")


def _command_ran(name: str, options: list[str], result: str) -> None:
    audit_record(action=f"command.{name}", source=Source.COMMAND, result=result, target_type="command",
                 target_id=name, detail=options)


def install() -> None:
    register_write_recorder(record_api_write, before=workspaces_of_path)
    register_command_recorder(_command_ran)
    signals.user_logged_in.connect(_logged_in, dispatch_uid="audit.login")
    signals.user_logged_out.connect(_logged_out, dispatch_uid="audit.logout")
    signals.user_login_failed.connect(_login_failed, dispatch_uid="audit.login_failed")

