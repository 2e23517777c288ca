"""What the apps above hear from the key store without llm importing them."""

from django.dispatch import Signal

# Sent after commit when a key's secret or base URL changed, with `key_id`: the agents whose
# model uses it get it again (agents.llm_model connects in AgentsConfig.ready()).
key_changed = Signal()
