"""Agent files, export and migration (docs/api.md "Files, export and migration"): the state folder of an agent's
workload read and edited through the backend, exported as a bundle and restored into a new
agent through a migration draft."""
