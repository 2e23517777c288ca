"""A chat turn with an agent's runtime, and what it costs reaching the usage store."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal

from fleet.edge.django_thread import in_django_thread
from fleet.errors import NotFound

from ..gateway import ChatEvent, ChatMessage, ChatSession, ChatUsage, GatewayError, gateway_for
from ..models import Agent
from ..usage.pull import usage_key_name
from ..usage.services import usage_ingest
from ..usage.validation import UsageInput

logger = logging.getLogger(__name__)

NO_SUCH_CONVERSATION = "The agent's runtime has no such conversation."


def chat_turn(*, agent: Agent, message: str, session_id: str | None) -> AsyncIterator[ChatEvent]:
    """The turn's events as the runtime produces them (read on the event loop). The agent's
    gateway is resolved now, so a stopped agent or an unreachable engine is still an answer."""
    events = gateway_for(agent).chat(message, session_id=session_id)
    return _recorded(events, agent=agent)


async def _recorded(events: AsyncIterator[ChatEvent], *, agent: Agent) -> AsyncIterator[ChatEvent]:
    """The events, the turn's usage recorded before `done` is passed on (budgets see it at once;
    an agent metered at the model gateway had each of the turn's calls recorded there)."""
    async for event in events:
        if event.kind == "done" and event.usage is not None and not agent.metered_at_gateway:
            await in_django_thread(chat_usage_record, agent=agent, usage=event.usage, run_id=event.run_id)
        yield event


def chat_usage_record(*, agent: Agent, usage: ChatUsage, run_id: str) -> None:
    """The turn's usage as one event of the usage store, under the key the runtime's own
    figures use (so a later pull of those figures adds only what it did not count: never
    twice), once per run."""
    cost = None if usage.cost_usd is None else Decimal(str(usage.cost_usd))
    event = UsageInput(
        request_id=f"chat:{run_id or uuid.uuid4().hex}",
        model=usage_key_name(usage.model, "model"), provider=usage_key_name(usage.provider, "provider"),
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost_usd=cost,
        occurred_at=usage.counted_at or datetime.now(UTC),
    )
    try:
        usage_ingest(agent=agent, events=[event])
    except Exception:  # the turn happened; the periodic pull records it if this could not
        logger.exception("Recording the usage of a chat turn of agent %s failed", agent.pk)


def chat_session_list(*, agent: Agent) -> list[ChatSession]:
    return gateway_for(agent).chat_sessions()


def chat_message_list(*, agent: Agent, session_id: str) -> list[ChatMessage]:
    try:
        return gateway_for(agent).chat_messages(session_id)
    except GatewayError as exc:
        if exc.status == 404:
            raise NotFound(NO_SUCH_CONVERSATION) from None
        raise
