"""Agent resource stats: live snapshots, the 10-second sampler, 24 hours of history.

The sampler and the purge are declared for beat in `agents.stats.periodic`; the routes live
in `agents.stats.urls`.
"""
