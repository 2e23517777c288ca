"""The installation's Ed25519 device identity and the connect signature OpenClaw checks.

One key for the whole installation, generated the first time it is needed and stored encrypted
(agents.models.GatewayDevice). Two workers that need it at once both try to insert the single
row; the database lets one win and both use the winner's key.

The signature covers, in this order and joined by "|" (RUNTIMES.md section 1):
v3, device id, client id, client mode, role, scopes comma-joined, signedAt (the challenge ts),
the auth token, the challenge nonce, platform lowercased, device family lowercased or empty.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..models import GatewayDevice
from ..models.gateway_device import SINGLETON_ID
from .errors import GatewayUnreachable


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _lower_ascii(value: str | None) -> str:
    # OpenClaw lowercases A-Z only (not a Unicode casefold), after trimming.
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in (value or "").strip())


def signature_payload(*, device_id: str, client_id: str, client_mode: str, role: str, scopes: list[str],
                      signed_at: int, token: str, nonce: str, platform: str, device_family: str = "") -> str:
    return "|".join([
        "v3", device_id, client_id, client_mode, role, ",".join(scopes), str(signed_at), token or "", nonce,
        _lower_ascii(platform), _lower_ascii(device_family),
    ])


def device_id_of(public_raw: bytes) -> str:
    return hashlib.sha256(public_raw).hexdigest()


@dataclass(frozen=True)
class DeviceIdentity:
    device_id: str
    public_key: str  # base64url of the raw public key
    private_key: Ed25519PrivateKey = field(repr=False)

    @classmethod
    def generate(cls) -> DeviceIdentity:
        return cls.from_seed(Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()))

    @classmethod
    def from_seed(cls, seed: bytes) -> DeviceIdentity:
        private = Ed25519PrivateKey.from_private_bytes(seed)
        public_raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return cls(device_id=device_id_of(public_raw), public_key=b64url(public_raw), private_key=private)

    @property
    def seed(self) -> str:
        return b64url(self.private_key.private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()))

    def connect_device(self, *, client_id: str, client_mode: str, role: str, scopes: list[str], token: str,
                       nonce: str, signed_at: int, platform: str, device_family: str = "") -> dict:
        """The `device` object of a connect request, signed for this challenge."""
        payload = signature_payload(
            device_id=self.device_id, client_id=client_id, client_mode=client_mode, role=role, scopes=scopes,
            signed_at=signed_at, token=token, nonce=nonce, platform=platform, device_family=device_family,
        )
        return {
            "id": self.device_id,
            "publicKey": self.public_key,
            "signature": b64url(self.private_key.sign(payload.encode("utf-8"))),
            "signedAt": signed_at,
            "nonce": nonce,
        }


def installation_device() -> DeviceIdentity:
    """The installation's identity, created on first use (race-safe: one row wins)."""
    row = GatewayDevice.objects.filter(pk=SINGLETON_ID).first()
    if row is None:
        fresh = DeviceIdentity.generate()
        # get_or_create catches the unique violation of a concurrent insert and reads the winner.
        row, _ = GatewayDevice.objects.get_or_create(pk=SINGLETON_ID, defaults={
            "device_id": fresh.device_id, "public_key": fresh.public_key, "private_key": fresh.seed,
        })
    if not isinstance(row.private_key, str):  # an UndecryptableSecret: never replace it silently
        raise GatewayUnreachable(
            "The installation's gateway device key cannot be decrypted; restore its encryption key."
        )
    try:
        identity = DeviceIdentity.from_seed(b64url_decode(row.private_key))
    except (ValueError, binascii.Error):
        raise GatewayUnreachable("The installation's gateway device key is damaged.") from None
    if identity.device_id != row.device_id:
        raise GatewayUnreachable("The installation's gateway device key does not match its stored device id.")
    return identity
