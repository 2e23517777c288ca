"""The installation's device identity: made once, stored encrypted, and the signature OpenClaw checks."""

from __future__ import annotations

import hashlib
import threading

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.db import connection, connections

from agents.gateway import GatewayUnreachable
from agents.gateway.device import b64url_decode, installation_device
from agents.models import GatewayDevice


@pytest.mark.django_db
def test_the_identity_is_made_once_and_its_private_key_stored_encrypted():
    first = installation_device()
    second = installation_device()

    assert first.device_id == second.device_id and GatewayDevice.objects.count() == 1
    public = b64url_decode(first.public_key)
    assert len(public) == 32 and first.device_id == hashlib.sha256(public).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT private_key FROM agents_gatewaydevice")
        (stored,) = cursor.fetchone()
    assert stored.startswith("v1:") and first.seed not in stored


@pytest.mark.django_db
def test_the_connect_signature_covers_the_v3_fields_in_order():
    device = installation_device()

    signed = device.connect_device(client_id="gateway-client", client_mode="backend", role="operator",
                                   scopes=["operator.read", "operator.write"], token="tok", nonce="n-1",
                                   signed_at=1737264000000, platform="Linux", device_family="Server")

    expected = (f"v3|{device.device_id}|gateway-client|backend|operator|operator.read,operator.write|"
                "1737264000000|tok|n-1|linux|server")
    Ed25519PublicKey.from_public_bytes(b64url_decode(signed["publicKey"])).verify(
        b64url_decode(signed["signature"]), expected.encode())  # raises if it does not match
    assert (signed["id"], signed["signedAt"], signed["nonce"]) == (device.device_id, 1737264000000, "n-1")
    assert "=" not in signed["signature"] + signed["publicKey"]  # base64url without padding


@pytest.mark.django_db(transaction=True)
def test_two_workers_making_it_at_once_end_with_one_key():
    start = threading.Barrier(4)
    made, failures = [], []

    def worker():
        try:
            start.wait()
            made.append(installation_device().device_id)
        except Exception as exc:  # pragma: no cover - reported below
            failures.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert failures == []
    assert len(made) == 4 and len(set(made)) == 1
    assert GatewayDevice.objects.get().device_id == made[0]


@pytest.mark.django_db
def test_an_undecryptable_key_fails_closed_and_is_kept():
    device = installation_device()
    unknown_key = "v1:gone:" + "A" * 60  # a token of a key id the ring does not have
    with connection.cursor() as cursor:
        cursor.execute("UPDATE agents_gatewaydevice SET private_key = %s", [unknown_key])

    with pytest.raises(GatewayUnreachable, match="cannot be decrypted"):
        installation_device()
    assert GatewayDevice.objects.get().device_id == device.device_id  # kept, for when the key comes back


@pytest.mark.django_db
def test_a_damaged_key_fails_closed():
    installation_device()
    GatewayDevice.objects.update(private_key="not base64url!")  # encrypted fine, but not a seed

    with pytest.raises(GatewayUnreachable, match="damaged"):
        installation_device()
