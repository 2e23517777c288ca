from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agents', '0013_deploy_idempotency_key'),
    ]

    operations = [
        migrations.AddField(
            model_name='agent',
            name='ready_deadline_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
