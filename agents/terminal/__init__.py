"""Terminals: an interactive shell in an agent's workload over a WebSocket (docs/edge.md;
docs/api.md, "Terminal").

- access.py: who may open one on which agent, and what the agent must be;
- tickets.py: the single-use ticket a browser opens one with;
- records.py: the TerminalSession rows (who, which agent, when, how it ended);
- relay.py: frames between the WebSocket and the shell, the idle timeout, the re-checks;
- socket.py: the WebSocket route `/api/agents/:id/terminal`;
- api.py: `POST /api/agents/:id/terminal/session`, the ticket for a browser.
"""
