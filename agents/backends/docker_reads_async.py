"""The engine reads the event-loop readers share (stats for the sampler, inspect for the
monitoring sweep): a GET's JSON answer with the backend's errors, and an agent's container found
as DockerBackend finds it (the recorded id, else its label), over one aiohttp session on the
engine's socket (docker_async.engine_session)."""

from __future__ import annotations

import json

import aiohttp

from agents.backends.base import LABEL_AGENT_ID, BackendError, BackendUnreachable, WorkloadMissing
from agents.backends.docker_engine import engine_info_known, engine_info_record

GONE = "The agent's container no longer exists on the Docker engine."


class EngineReads:
    def __init__(self, host: str, base: str, session: aiohttp.ClientSession):
        self.host, self.base, self.session = host, base, session

    async def container(self, agent) -> dict:
        """The agent's container (inspected): by the recorded id, else by its label;
        WorkloadMissing when there is none."""
        found = await self.container_or_none(agent)
        if found is None:
            raise WorkloadMissing(GONE)
        return found

    async def container_or_none(self, agent) -> dict | None:
        if agent.container_id:
            try:
                return await self.get(f"/containers/{agent.container_id}/json")
            except WorkloadMissing:
                pass
        filters = json.dumps({"label": [f"{LABEL_AGENT_ID}={agent.id}"]})
        found = await self.get("/containers/json", {"all": "true", "filters": filters})
        if not found:
            return None
        return await self.get(f"/containers/{found[0]['Id']}/json")

    async def engine_name(self) -> str:
        """The engine's name, read once per engine per process (docker_engine.engine_info)."""
        info = engine_info_known(self.host) or engine_info_record(self.host, await self.get("/info"))
        return info["name"]

    async def get(self, path: str, params: dict | None = None):
        """The JSON answer of a GET; the backend's errors as engine_errors gives them."""
        try:
            async with self.session.get(self.base + path, params=params) as response:
                status, text = response.status, await response.text()
        except (aiohttp.ClientError, OSError) as exc:
            raise BackendUnreachable(f"The Docker engine at {self.host} cannot be reached: {exc}") from exc
        if status == 404:
            raise WorkloadMissing(GONE)
        if status >= 400:
            try:
                message = json.loads(text).get("message") or text
            except (ValueError, AttributeError):
                message = text
            error = BackendError(f"The Docker engine refused the request: {str(message)[:300]}")
            error.transient = status >= 500
            raise error
        return json.loads(text)
