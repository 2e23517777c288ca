"""Runtime-managed (OpenClaw) channels: the desired config lives here and is pushed into the
runtime's `channels.<type>` block with config.patch; logins and logouts go to the runtime.

Saving stores first, then pushes: a stopped agent answers restart "pending" and gets the config
at its next start (channels.tasks.runtime_channels_reapply). Pushing is idempotent: the same
stored state patched twice changes nothing in the runtime.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents.gateway import GatewayError, RuntimeGateway
from agents.models import SERVING, Agent
from fleet.errors import InvalidRequest

from ..config import config_check
from ..definitions import LOGOUT_TYPES, Definition
from ..errors import NoLogout, PluginUnavailable
from ..models import RuntimeChannel
from .cli_login import cli_login_of, run_cli_login
from .common import channel_gateway, definition_of, require_openclaw
from .login_result import QR_LIFETIME, LoginResult

logger = logging.getLogger(__name__)

LOGIN_WAIT_MS = 20_000
FAILURE_MARKERS = ("fail", "error", "expired", "no active", "not available", "timed out", "unable")


@dataclass(frozen=True)
class SaveResult:
    channel: RuntimeChannel
    restart: str  # "applied", "requested" or "pending"


def plugin_path(definition: Definition) -> str | None:
    """Where the image carries the channel's plugin; None when OpenClaw bundles it. PluginUnavailable
    when neither: the runtime could not load the channel."""
    plugin = definition.plugin
    if plugin is None or plugin.bundled:
        return None
    path = settings.OPENCLAW_CHANNEL_PLUGIN_PATHS.get(definition.type)
    if not path:
        raise PluginUnavailable(
            f"The {definition.label} channel needs the OpenClaw plugin {plugin.package}, which this runtime "
            f"image does not carry; add it to the image and to OPENCLAW_CHANNEL_PLUGIN_PATHS."
        )
    return path


def plugin_available(definition: Definition) -> bool:
    try:
        plugin_path(definition)
    except PluginUnavailable:
        return False
    return True


def channel_block(channel: RuntimeChannel, definition: Definition) -> dict:
    """The `channels.<type>` merge patch of a stored channel: every field of the definition,
    null for those unset (a merge patch removes them), and the account of QR channels."""
    values = {**channel.config, **channel.secret_values}
    block = {field.key: values.get(field.key) for field in definition.config_fields}
    block["enabled"] = channel.enabled
    if definition.login == "qr":
        block["accounts"] = {"default": {"enabled": channel.enabled}}
    return block


def _plugin_patch(gateway: RuntimeGateway, definitions: list[Definition]) -> dict:
    """The plugins part of a patch: paths the runtime does not load yet, and their entries on."""
    wanted = {d.type: path for d in definitions if (path := plugin_path(d))}
    if not wanted:
        return {}
    plugins = (gateway.config_get().get("config") or {}).get("plugins") or {}
    loaded = list(((plugins.get("load") or {}).get("paths")) or [])
    entries = plugins.get("entries") or {}
    missing = [p for p in wanted.values() if p not in loaded]
    off = [t for t in wanted if not (entries.get(t) or {}).get("enabled")]
    patch: dict = {}
    if missing:
        patch.setdefault("load", {})["paths"] = loaded + missing
    if off:
        patch["entries"] = {t: {"enabled": True} for t in off}
    return {"plugins": patch} if patch else {}


def runtime_channels_push(*, agent: Agent, channels: list[RuntimeChannel],
                          gateway: RuntimeGateway | None = None) -> str:
    """Patch the runtime with these stored channels: "applied", or "requested" when the runtime
    says the change needs a restart. AgentNotRunning / gateway errors propagate."""
    if not channels:
        return "applied"
    gateway = gateway or channel_gateway(agent)
    definitions = {c.type: definition_of(agent, c.type) for c in channels}
    patch = {"channels": {c.type: channel_block(c, definitions[c.type]) for c in channels}}
    patch.update(_plugin_patch(gateway, [definitions[c.type] for c in channels if c.enabled]))
    # Lists are Fleet's desired state as a whole: the runtime replaces them instead of refusing
    # a patch that drops an entry.
    replace = [f"channels.{c.type}.{f.key}" for c in channels for f in definitions[c.type].config_fields
               if f.type == "list"]
    result = gateway.config_patch(patch, replace_paths=replace)
    RuntimeChannel.objects.filter(pk__in=[c.pk for c in channels]).update(applied_at=timezone.now())
    return "requested" if result.get("requires_restart") else "applied"


def runtime_channel_save(*, agent: Agent, type_: str, config=None, enabled: bool | None = None,
                         partial: bool = False) -> SaveResult:
    """Validate and store the channel's config, then push it when the agent runs."""
    require_openclaw(agent)
    definition = definition_of(agent, type_)
    with transaction.atomic():
        # Locked (or created) once: two saves of one channel at a time apply one after the other;
        # a refused one rolls back the row it created.
        channel, created = RuntimeChannel.objects.select_for_update().get_or_create(agent=agent, type=type_)
        if config is not None or created:
            checked = config_check(definition, config if config is not None else {},
                                   stored=None if created else channel.checked, merge=partial and not created)
            channel.store(checked)
        if enabled is not None:
            channel.enabled = enabled
        if channel.enabled:
            plugin_path(definition)  # refuse a channel the runtime cannot load, before storing it
        channel.applied_at = None
        channel.save()
    if agent.status not in SERVING:
        return SaveResult(channel, "pending")
    restart = runtime_channels_push(agent=agent, channels=[channel])
    channel.refresh_from_db()
    return SaveResult(channel, restart)


def runtime_channels_reapply(*, agent: Agent) -> str:
    """Push every stored channel again (after a redeploy, a start, a restart)."""
    return runtime_channels_push(agent=agent, channels=list(RuntimeChannel.objects.filter(agent=agent)))


def _failed(message: str) -> bool:
    lowered = message.lower()
    return any(marker in lowered for marker in FAILURE_MARKERS)


def _login_definition(agent: Agent, type_: str) -> Definition:
    require_openclaw(agent)
    definition = definition_of(agent, type_)
    if definition.login == "none":
        raise InvalidRequest(f"The {definition.label} channel has no login step: save its config instead.",
                             code="no_login")
    if definition.login == "cli":
        cli_login_of(definition)  # 409 unsupported for a type without an allowlisted command
    return definition


def runtime_channel_login(*, agent: Agent, type_: str, force: bool = False) -> LoginResult:
    """Start QR pairing (web.login.start). A failure the runtime reports inside its ok reply
    (no network, no provider) is a GatewayError with the runtime's own message."""
    definition = _login_definition(agent, type_)
    gateway = channel_gateway(agent)
    plugin = _plugin_patch(gateway, [definition])
    if plugin:
        gateway.config_patch(plugin)
    if definition.login == "cli":
        return run_cli_login(agent, definition)
    answer = gateway.login_start(type_, force=force)
    message = answer.get("message") or ""
    if answer.get("qr_data_url"):
        return LoginResult("qr", message or "Scan the QR code with the phone.", answer["qr_data_url"],
                           timezone.now() + QR_LIFETIME)
    if "already" in message.lower() and not _failed(message):
        return LoginResult("linked", message, connected=True)
    raise GatewayError(message or f"The runtime gave no QR code for {definition.label}.")


def runtime_channel_login_wait(*, agent: Agent, type_: str, current_qr: str | None = None) -> LoginResult:
    definition = _login_definition(agent, type_)
    if definition.login == "cli":
        return _cli_login_wait(agent, definition)
    answer = channel_gateway(agent).login_wait(type_, timeout_ms=LOGIN_WAIT_MS, current_qr=current_qr)
    message = answer.get("message") or ""
    if answer.get("connected"):
        return LoginResult("connected", message or "Linked.", connected=True)
    if answer.get("qr_data_url"):
        return LoginResult("qr", message, answer["qr_data_url"], timezone.now() + QR_LIFETIME)
    if _failed(message):
        raise GatewayError(message)
    return LoginResult("waiting", message or "Waiting for the QR code to be scanned.")


def _cli_login_wait(agent: Agent, definition: Definition) -> LoginResult:
    """A CLI login waits for its scan inside the workload, where Fleet cannot ask it: the
    runtime's channels.status says whether the account is linked yet."""
    state = next((s for s in channel_gateway(agent).channels_status() if s.channel == definition.type), None)
    if state is not None and (state.connected or state.linked):
        return LoginResult("connected", f"{definition.label} is linked.", connected=True)
    waiting = "Waiting for the QR code to be scanned."
    return LoginResult("waiting", f"{waiting} The runtime reports: {state.error}" if state and state.error else waiting)


def runtime_channel_logout(*, agent: Agent, type_: str) -> dict:
    """Log the channel out in the runtime. Telegram's logout clears its bot token there, so the
    stored token goes too (a later push must not bring it back)."""
    require_openclaw(agent)
    definition = definition_of(agent, type_)
    if type_ not in LOGOUT_TYPES:
        raise NoLogout(f"The {definition.label} channel has no logout; only {', '.join(LOGOUT_TYPES)} do.")
    answer = channel_gateway(agent).logout(type_)
    if answer.get("cleared"):
        with transaction.atomic():
            channel = RuntimeChannel.objects.select_for_update().filter(agent=agent, type=type_).first()
            if channel is not None and definition.secret_keys:
                checked = channel.checked
                channel.store(type(checked)(checked.public, {k: v for k, v in checked.secrets.items()
                                                             if k not in definition.secret_keys}))
                channel.save(update_fields=["config", "secrets", "updated_at"])
    return {"success": True, "cleared": bool(answer.get("cleared")), "loggedOut": bool(answer.get("logged_out"))}
