"""Stats history: make the primary key a covering index (PostgreSQL only).

One agent's day is 8,640 rows spread over as many heap pages, because every tick writes the
whole fleet side by side. With the sample values INCLUDEd in the (agent_id, recorded_at)
primary key, a history read is an index-only scan over a few hundred adjacent index pages.
Django's model state does not change: the key columns are the same. Insert-triggered
autovacuum is made more eager so that recent pages are all-visible and stay index-only.
"""

from django.db import migrations

TABLE = "agents_statssample"
VALUES = (
    "cpu_percent, memory_usage_mb, memory_limit_mb, memory_percent, "
    "network_rx_mb, network_tx_mb, disk_read_mb, disk_write_mb, pids"
)


def covering_primary_key(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, "
        f"ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (agent_id, recorded_at) INCLUDE ({VALUES})"
    )
    schema_editor.execute(f"ALTER TABLE {TABLE} SET (autovacuum_vacuum_insert_scale_factor = 0.01)")


def plain_primary_key(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"ALTER TABLE {TABLE} DROP CONSTRAINT {TABLE}_pkey, "
        f"ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (agent_id, recorded_at)"
    )
    schema_editor.execute(f"ALTER TABLE {TABLE} RESET (autovacuum_vacuum_insert_scale_factor)")


class Migration(migrations.Migration):
    dependencies = [("agents", "0003_usage_budgets")]

    operations = [migrations.RunPython(covering_primary_key, plain_primary_key, elidable=False)]
