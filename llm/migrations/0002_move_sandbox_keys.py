"""Move the sandbox's keys (accounts.ProviderKey, one per user and provider) into this store:
each becomes the user's own key of that provider, labelled with the provider's name. The key is
decrypted and re-encrypted by the same field class (fleet.crypto), never written in clear."""

from django.db import migrations

LABELS = {"nvidia": "NVIDIA"}


def forwards(apps, schema_editor):
    Old = apps.get_model("accounts", "ProviderKey")  # noqa: N806 - a model class
    New = apps.get_model("llm", "ProviderKey")  # noqa: N806
    for old in Old.objects.all().order_by("id").iterator():
        new = New.objects.create(user_id=old.user_id, provider=old.provider, api_key=old.key,
                                 label=LABELS.get(old.provider, old.provider), created_by_id=old.user_id)
        # auto_now fields: the moved key keeps its own dates.
        New.objects.filter(pk=new.pk).update(created_at=old.created_at, updated_at=old.updated_at)


def backwards(apps, schema_editor):
    Old = apps.get_model("accounts", "ProviderKey")  # noqa: N806
    New = apps.get_model("llm", "ProviderKey")  # noqa: N806
    for new in New.objects.filter(user__isnull=False, provider__in=list(LABELS)).order_by("created_at", "id"):
        Old.objects.get_or_create(user_id=new.user_id, provider=new.provider, defaults={"key": new.api_key})


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0004_user_groups"),
        ("llm", "0001_provider_keys"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
