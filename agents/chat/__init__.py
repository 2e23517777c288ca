"""Chat with an agent's runtime: POST /agents/:id/chat streams a turn's events; the history
is read from the runtime itself (agents.gateway's chat operations)."""
