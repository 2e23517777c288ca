"""Each agent's model (docs/api.md "Each agent's model"): a saved provider key of llm's store and a model name, pushed
into the runtime's own configuration (OpenClaw through config.patch, Hermes through its
config.yaml and Fleet's block of its .env), again when the runtime comes up and when the key
changes. The key never leaves llm's store but into the runtime: never in a response, a log
line, an event, a task argument or an export."""
