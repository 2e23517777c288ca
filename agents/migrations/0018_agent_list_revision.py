"""Agent.list_revision: the revision of an agent's row in GET /agents. Its sequence, functions
and triggers are agents.list_revisions', installed at the end of this same `migrate` (post_migrate,
from this migration on), which moves every agent's revision when it creates them."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0017_model_routing'),
    ]

    operations = [
        migrations.AddField(
            model_name='agent',
            name='list_revision',
            field=models.BigIntegerField(default=0, editable=False),
        ),
    ]
