from alerts.channel_config import parse_channels
from alerts.services import alert_rule_create, events_fan_out


def make_rule(*, workspace, channels, pattern="agent.*", name="Ops", enabled=True, created_by=None):
    """A rule made by alert_rule_create, from channel objects as the API takes them."""
    return alert_rule_create(
        workspace=workspace,
        created_by=created_by or workspace.owner,
        name=name,
        event_pattern=pattern,
        channels=parse_channels(channels),
        enabled=enabled,
    )


def webhook(url: str, **extra) -> dict:
    """A webhook channel object, as the API takes it."""
    return {"type": "webhook", "url": url, **extra}


def fan_out() -> list:
    """What the dispatch task does once emitters have committed, run here and publishing
    nothing: every waiting event is matched; the deliveries made (id, channel_id,
    channel_type) are returned."""
    return events_fan_out().deliveries
