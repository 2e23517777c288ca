"""The errors of the logs route (fleet.errors families)."""

from fleet.errors import Conflict


class LogsUnsupported(Conflict):
    code = "unsupported"
    default_message = "The agent's deploy target cannot read a workload's output."
