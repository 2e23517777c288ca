"""The revisions of an agent's row in GET /agents: Agent.list_revision (its own columns) and
AssignmentsRevision (its assignments as the row shows them). Their sequence, functions and
triggers are agents.list_revisions', installed at the end of this same `migrate` (post_migrate,
from this migration on), which moves every agent's revision when it creates them."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0018_agent_spend_month'),
    ]

    operations = [
        migrations.AddField(
            model_name='agent',
            name='list_revision',
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.CreateModel(
            name='AssignmentsRevision',
            fields=[
                ('agent', models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING,
                                               primary_key=True, related_name='assignments_revision', serialize=False,
                                               to='agents.agent')),
                ('revision', models.BigIntegerField()),
            ],
        ),
    ]
