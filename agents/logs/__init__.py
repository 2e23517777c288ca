"""An agent's workload output: GET /api/agents/:id/logs, as JSON or followed as server-sent events."""
