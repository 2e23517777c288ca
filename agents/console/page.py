"""What the agent's console page shows besides its fields: status with the reason, the
buttons its state allows, its model, whether its UI can be opened and it can be talked to, events, budgets
with current spend, deploy steps, whether a terminal may be opened."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from fleet.models import Event

from ..budgets.selectors import agent_budget_report
from ..deploy_progress import deploy_steps
from ..llm_model.services import model_record
from ..models import IN_FLIGHT, SERVING, Agent, Status
from ..services.lifecycle import REDEPLOYABLE

TIMELINE_EVENTS = 25

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageSection:
    """A card an app above agents adds to the agent page: its template, given `context(agent)`
    as `section`."""

    template: str
    context: Callable[[Agent], dict]


_sections: dict[str, PageSection] = {}


def register_page_section(name: str, section: PageSection) -> None:
    """Add (or replace, by `name`) a card of the agent page (from an app's AppConfig.ready())."""
    _sections[name] = section


def unregister_page_section(name: str) -> None:
    _sections.pop(name, None)


def page_sections(agent: Agent) -> list[dict]:
    """The registered cards with their context, in registration order; one that fails is
    logged and left out, so a broken card never takes the page down."""
    shown = []
    for name, section in list(_sections.items()):
        try:
            shown.append({"template": section.template, "section": section.context(agent)})
        except Exception:
            logger.exception("The agent page card %r failed for agent %s", name, agent.pk)
    return shown


@dataclass(frozen=True)
class Button:
    verb: str
    label: str
    confirm: str  # empty: no confirmation (not destructive)


START = Button("start", "Start", "")
STOP = Button("stop", "Stop", "Stop this agent? Its runtime stops serving until started again.")
RESTART = Button("restart", "Restart", "Restart this agent? Running conversations are interrupted.")
REDEPLOY = Button("redeploy", "Redeploy",
                  "Redeploy this agent? Its container is replaced by a new one (its state is kept).")
BUTTONS = {button.verb: button for button in (START, STOP, RESTART, REDEPLOY)}


def buttons_for(agent: Agent) -> list[Button]:
    """The lifecycle buttons the agent's state allows (the services still decide)."""
    if agent.is_external:
        return []
    shown = []
    if agent.status == Status.STOPPED and agent.container_id:
        shown.append(START)
    if agent.status != Status.STOPPED:
        shown.append(STOP)
    if agent.status in SERVING and agent.container_id:
        shown.append(RESTART)
    if agent.status in REDEPLOYABLE:
        shown.append(REDEPLOY)
    return shown


def serves(agent: Agent) -> bool:
    """Whether the agent's runtime answers now: its UI can be opened and it can be talked to."""
    return agent.status in SERVING


def agent_page_context(agent: Agent) -> dict:
    report = agent_budget_report(agent=agent)
    return {
        "agent_status": agent.status,
        "agent_reason": agent.last_error,
        "agent_paused_reason": agent.paused_reason,
        "agent_buttons": buttons_for(agent),
        "agent_can_change_resources": not agent.is_external and agent.status not in IN_FLIGHT,
        "agent_serves": serves(agent),
        "agent_events": list(Event.objects.filter(agent_id=agent.pk).order_by("-occurred_at")[:TIMELINE_EVENTS]),
        "agent_budgets": report.budgets,
        "agent_deploying": agent.status in IN_FLIGHT,
        "agent_deploy_steps": deploy_steps(agent.pk) if agent.status in IN_FLIGHT else [],
        "agent_has_logs": bool(agent.container_id) and not agent.is_external,
        "agent_model": model_record(agent),
        # The target may still refuse a shell (409 unsupported): the panel says so when asked.
        "agent_has_terminal": serves(agent) and bool(agent.container_id) and not agent.is_external,
        "agent_sections": page_sections(agent),
    }
