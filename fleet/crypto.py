"""Secrets at rest: an AES-256-GCM key ring and an encrypted model field.

Keys come from settings.FLEET_ENCRYPTION_KEYS as "kid:base64key,kid2:base64key". The
first key encrypts; every listed key decrypts, so a new key can be put first and the old
ones kept until `manage.py rotate_encryption_key` has re-encrypted every stored value.

A token is "v1:<kid>:<base64url(nonce | ciphertext+tag)>". The "v1:<kid>" prefix is
authenticated as associated data, so a token cannot be relabelled to another key.
`decrypt()` raises DecryptionError for an unknown key id, a tampered or truncated token,
or anything that is not a token: it never returns ciphertext or a guess.

EncryptedTextField stores the token; its Python value is the plaintext str (or None).
A stored value that cannot be decrypted (a key removed too early, a damaged row) fails
closed without making the row unloadable: the attribute holds an `UndecryptableSecret`,
which refuses every use as text (str(), formatting, len(), iteration, concatenation raise
DecryptionError or TypeError) but is truthy ("a secret is set") and, when the row is
saved again, writes the original token back unchanged, so restoring the key recovers it.
Lookups other than `isnull` are refused: each encryption uses a fresh nonce, so an
equality filter could never match.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
from dataclasses import dataclass
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

logger = logging.getLogger(__name__)

TOKEN_VERSION = "v1"
NONCE_BYTES = 12
KEY_BYTES = 32
_KID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


class DecryptionError(Exception):
    """A token could not be decrypted: unknown key id, tampered, truncated or not a token."""


@dataclass(frozen=True)
class KeyRing:
    primary_kid: str
    keys: dict[str, AESGCM]

    def encrypt(self, plaintext: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        header = f"{TOKEN_VERSION}:{self.primary_kid}"
        sealed = self.keys[self.primary_kid].encrypt(nonce, plaintext.encode("utf-8"), header.encode())
        return f"{header}:{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def decrypt(self, token: str) -> str:
        kid, payload = _split_token(token)
        key = self.keys.get(kid)
        if key is None:
            raise DecryptionError(f"No encryption key with id {kid!r} is configured.")
        nonce, sealed = payload[:NONCE_BYTES], payload[NONCE_BYTES:]
        try:
            plaintext = key.decrypt(nonce, sealed, f"{TOKEN_VERSION}:{kid}".encode())
            return plaintext.decode("utf-8")
        except (InvalidTag, UnicodeDecodeError):
            raise DecryptionError("The encrypted value was tampered with or belongs to another key.") from None


def _split_token(token) -> tuple[str, bytes]:
    """(kid, nonce|ciphertext) of a well-formed token, else DecryptionError."""
    if not isinstance(token, str):
        raise DecryptionError("An encrypted value must be a string token.")
    version, sep1, rest = token.partition(":")
    kid, sep2, encoded = rest.partition(":")
    if version != TOKEN_VERSION or not sep1 or not sep2 or not _KID.match(kid):
        raise DecryptionError("The value is not an encrypted token.")
    try:
        payload = base64.urlsafe_b64decode(encoded.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise DecryptionError("The encrypted token is not valid base64.") from None
    if len(payload) < NONCE_BYTES + 16:  # nonce + GCM tag at least
        raise DecryptionError("The encrypted token is truncated.")
    return kid, payload


def _decode_key(kid: str, encoded: str) -> bytes:
    # Accept standard and URL-safe base64, with or without padding.
    text = encoded.strip().replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ImproperlyConfigured(f"FLEET_ENCRYPTION_KEYS: key {kid!r} is not valid base64.") from None
    if len(raw) != KEY_BYTES:
        raise ImproperlyConfigured(
            f"FLEET_ENCRYPTION_KEYS: key {kid!r} is {len(raw)} bytes; AES-256 needs exactly {KEY_BYTES}."
        )
    return raw


@lru_cache(maxsize=8)
def parse_key_ring(spec: str) -> KeyRing:
    """Build a key ring from "kid:base64key,..."; ImproperlyConfigured on any flaw."""
    keys: dict[str, AESGCM] = {}
    primary = None
    for entry in (part.strip() for part in (spec or "").split(",")):
        if not entry:
            continue
        kid, sep, encoded = entry.partition(":")
        kid = kid.strip()
        if not sep or not _KID.match(kid):
            raise ImproperlyConfigured(
                "FLEET_ENCRYPTION_KEYS entries must look like 'kid:base64key' "
                "(kid: 1 to 32 letters, digits, '.', '_' or '-')."
            )
        if kid in keys:
            raise ImproperlyConfigured(f"FLEET_ENCRYPTION_KEYS: key id {kid!r} is listed twice.")
        keys[kid] = AESGCM(_decode_key(kid, encoded))
        primary = primary or kid
    if primary is None:
        raise ImproperlyConfigured("FLEET_ENCRYPTION_KEYS is empty; set at least one 'kid:base64key'.")
    return KeyRing(primary_kid=primary, keys=keys)


def key_ring() -> KeyRing:
    """The ring for the current settings (cached per value, so settings overrides apply)."""
    return parse_key_ring(settings.FLEET_ENCRYPTION_KEYS)


def new_key() -> str:
    """A fresh base64 AES-256 key, for an operator adding a key id to the ring."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode()


def encrypt(plaintext: str) -> str:
    if not isinstance(plaintext, str):
        raise TypeError("encrypt() takes a str.")
    return key_ring().encrypt(plaintext)


def decrypt(token: str) -> str:
    return key_ring().decrypt(token)


def token_key_id(token: str) -> str:
    """The key id a token was made with; DecryptionError if it is not a token."""
    return _split_token(token)[0]


def needs_rotation(token: str) -> bool:
    """True unless `token` is a well-formed token under the primary key."""
    try:
        return token_key_id(token) != key_ring().primary_kid
    except DecryptionError:
        return True


class UndecryptableSecret:
    """The value of an encrypted field whose stored token cannot be decrypted.

    Truthy (a secret is set), never usable as text, and saved back as the same token.
    """

    __slots__ = ("token", "reason")

    def __init__(self, token: str, reason: str):
        self.token = token
        self.reason = reason

    def _refuse(self, *args, **kwargs):
        raise DecryptionError(f"The stored secret cannot be decrypted: {self.reason}")

    __str__ = __format__ = __len__ = __iter__ = __getitem__ = __contains__ = _refuse

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, UndecryptableSecret) and other.token == self.token

    def __hash__(self) -> int:
        return hash(self.token)

    def __repr__(self) -> str:
        return "<UndecryptableSecret>"  # never the token: logs must not carry it


class EncryptedTextField(models.TextField):
    """A TextField stored as an AES-256-GCM token; see the module docstring."""

    description = "Text encrypted at rest (AES-256-GCM)"

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        try:
            return decrypt(value)
        except DecryptionError as exc:
            model = getattr(self, "model", None)
            logger.warning("Cannot decrypt %s.%s: %s", model._meta.label if model else "?", self.name, exc)
            return UndecryptableSecret(value, str(exc))

    def to_python(self, value):
        if value is None or isinstance(value, (str, UndecryptableSecret)):
            return value
        return str(value)

    def get_prep_value(self, value):
        if value is None:
            return None
        if isinstance(value, UndecryptableSecret):
            return value.token  # keep what is stored; never re-encrypt a stand-in
        return encrypt(str(value))

    def get_lookup(self, lookup_name):
        if lookup_name != "isnull":
            return None  # Django then raises FieldError "Unsupported lookup"
        return super().get_lookup(lookup_name)

    def get_transform(self, lookup_name):
        return None


def encrypted_fields():
    """(model, field) for every concrete EncryptedTextField of every installed model."""
    for model in apps.get_models():
        if model._meta.proxy:
            continue
        for field in model._meta.local_concrete_fields:
            if isinstance(field, EncryptedTextField):
                yield model, field
