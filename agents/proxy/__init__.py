"""The gateway proxy: each agent's own UI, served by Fleet at `<agent-id>.<GATEWAY_PROXY_DOMAIN>`
(docs/edge.md), with the runtime's secrets added on the way in and kept from the browser.
A runtime's UI is code Fleet does not control, so it never runs on Fleet's own origin."""
