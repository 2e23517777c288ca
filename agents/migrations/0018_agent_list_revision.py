"""Agent.list_revision: the revision of an agent's row in GET /agents. Its sequence and the
triggers that move it are agents.list_revisions', installed after every migrate from this
migration on (post_migrate); until then every agent reads 0 and no process keeps a row."""

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
