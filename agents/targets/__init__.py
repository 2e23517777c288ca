"""Registered deploy targets (docs/api.md "Registered targets"): the one grant model every platform target
shares (`access`, `grants`), and the registry of Remote Docker hosts (`remote_hosts`, its API).
Backends live in agents/backends/; this package holds who may use which target."""
