from django.db import models

from fleet.crypto import EncryptedTextField


class SealedNote(models.Model):
    title = models.CharField(max_length=50)
    secret = EncryptedTextField(null=True, blank=True)

    class Meta:
        app_label = "fleet_sealedapp"

    def __str__(self) -> str:
        return self.title
