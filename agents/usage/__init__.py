"""Token usage: ingestion (POST /agents/:id/usage), model rates, and the workspace cost report."""
