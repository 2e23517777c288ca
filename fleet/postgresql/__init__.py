"""Django's PostgreSQL backend with a cheaper connection health check (issue 19): see base.py."""
