from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0014_agent_ready_deadline'),
    ]

    operations = [
        migrations.AddField(
            model_name='agent',
            name='restart_count',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='agent',
            name='oom_killed',
            field=models.BooleanField(default=False),
        ),
    ]
