"""The agents app's HTTP API: thin views, one module per group of routes (see agents/urls.py)."""
