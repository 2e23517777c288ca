from alerts.channel_config import parse_channels
from alerts.services import alert_rule_create


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
