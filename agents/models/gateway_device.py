"""The installation's Ed25519 identity towards OpenClaw gateways (agents.gateway.device).

One row for the whole installation, made the first time a gateway call needs it. The private
key is stored encrypted (fleet.crypto); the public key and the device id derived from it are
public by nature and stored in clear.
"""

from __future__ import annotations

from django.db import models

from fleet.crypto import EncryptedTextField

SINGLETON_ID = 1


class GatewayDevice(models.Model):
    # A fixed primary key makes "one row" a database fact: a second insert is a unique violation.
    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON_ID, editable=False)
    device_id = models.CharField(max_length=64)  # hex SHA-256 of the raw public key
    public_key = models.CharField(max_length=64)  # base64url (no padding) of the raw 32 bytes
    private_key = EncryptedTextField()  # base64url of the raw 32-byte Ed25519 seed
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(id=SINGLETON_ID), name="agents_gatewaydevice_singleton"),
        ]
        verbose_name = "gateway device identity"

    def __str__(self) -> str:
        return f"gateway device {self.device_id[:12]}"
