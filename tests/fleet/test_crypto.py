import base64

import pytest
from django.core.exceptions import FieldError, ImproperlyConfigured

from fleet import crypto
from fleet.crypto import DecryptionError, UndecryptableSecret, decrypt, encrypt, needs_rotation

from .conftest import key_spec


@pytest.fixture(autouse=True)
def _one_key(settings):
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k1")


def test_it_round_trips_text_including_unicode_and_empty():
    for text in ("s3cret", "", "pässwörd ✓ " * 100):
        assert decrypt(encrypt(text)) == text


def test_the_token_records_the_primary_key_id_and_hides_the_plaintext():
    token = encrypt("hunter2")
    assert token.startswith("v1:k1:")
    assert "hunter2" not in token
    assert encrypt("hunter2") != token  # a fresh nonce every time


def test_it_rejects_a_tampered_token():
    token = encrypt("hunter2")
    prefix, payload = token.rsplit(":", 1)
    raw = bytearray(base64.urlsafe_b64decode(payload))
    raw[-1] ^= 1
    with pytest.raises(DecryptionError):
        decrypt(f"{prefix}:{base64.urlsafe_b64encode(bytes(raw)).decode()}")


def test_it_rejects_a_token_relabelled_to_another_key_id(settings):
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k1", "k2")
    token = encrypt("hunter2")
    with pytest.raises(DecryptionError):
        decrypt(token.replace("v1:k1:", "v1:k2:", 1))


def test_it_rejects_a_token_of_a_key_that_is_not_configured(settings):
    token = encrypt("hunter2")
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2")
    with pytest.raises(DecryptionError, match="k1"):
        decrypt(token)


def test_it_rejects_a_token_made_with_a_different_key_under_the_same_id(settings):
    token = encrypt("hunter2")
    settings.FLEET_ENCRYPTION_KEYS = "k1:" + base64.b64encode(b"x" * 32).decode()
    with pytest.raises(DecryptionError):
        decrypt(token)


@pytest.mark.parametrize("garbage", ["", "plaintext", "v1:k1:", "v1:k1:!!!", "v2:k1:AAAA", "v1:k1:QUJD", None, 42])
def test_it_rejects_garbage_without_guessing(garbage):
    with pytest.raises(DecryptionError):
        decrypt(garbage)


def test_any_listed_key_decrypts_but_only_the_first_encrypts(settings):
    old = encrypt("hunter2")
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2", "k1")
    assert decrypt(old) == "hunter2"
    assert encrypt("x").startswith("v1:k2:")


def test_needs_rotation_is_true_only_off_the_primary_key(settings):
    old = encrypt("hunter2")
    assert needs_rotation(old) is False
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2", "k1")
    assert needs_rotation(old) is True
    assert needs_rotation(encrypt("x")) is False
    assert needs_rotation("not a token") is True


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "empty"),
        ("k1", "kid:base64key"),
        ("bad kid:" + base64.b64encode(b"a" * 32).decode(), "kid:base64key"),
        ("k1:" + base64.b64encode(b"short").decode(), "5 bytes"),
        ("k1:not base64!", "not valid base64"),
        (key_spec("k1") + "," + key_spec("k1"), "listed twice"),
    ],
)
def test_it_refuses_a_malformed_key_ring_clearly(spec, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        crypto.parse_key_ring(spec)


def test_it_accepts_url_safe_base64_keys_without_padding():
    key = base64.urlsafe_b64encode(b"\xfb\xff" * 16).decode().rstrip("=")
    ring = crypto.parse_key_ring(f"dev1:{key}")
    assert ring.decrypt(ring.encrypt("ok")) == "ok"


def test_a_generated_key_loads():
    ring = crypto.parse_key_ring(f"new:{crypto.new_key()}")
    assert ring.primary_kid == "new"


# --- EncryptedTextField on a real table ------------------------------------------------


def raw_token(model, pk) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT secret FROM {model._meta.db_table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def test_the_field_stores_a_token_and_loads_the_plaintext(sealed_notes):
    note = sealed_notes.objects.create(title="a", secret="hunter2")
    assert raw_token(sealed_notes, note.pk).startswith("v1:k1:")
    assert sealed_notes.objects.get(pk=note.pk).secret == "hunter2"
    assert list(sealed_notes.objects.values_list("secret", flat=True)) == ["hunter2"]


def test_the_field_keeps_null_as_null(sealed_notes):
    note = sealed_notes.objects.create(title="a", secret=None)
    assert raw_token(sealed_notes, note.pk) is None
    assert sealed_notes.objects.get(pk=note.pk).secret is None
    assert sealed_notes.objects.filter(secret__isnull=True).count() == 1


def test_a_row_under_a_missing_key_still_loads_but_its_secret_fails_closed(sealed_notes, settings):
    note = sealed_notes.objects.create(title="a", secret="hunter2")
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2")

    loaded = sealed_notes.objects.get(pk=note.pk)
    assert loaded.title == "a"
    assert isinstance(loaded.secret, UndecryptableSecret)
    assert loaded.secret  # a secret is set, even if unreadable
    with pytest.raises(DecryptionError):
        str(loaded.secret)
    with pytest.raises(DecryptionError):
        f"Bearer {loaded.secret}"
    with pytest.raises(TypeError):
        "Bearer " + loaded.secret
    assert "v1:" not in repr(loaded.secret)


def test_saving_a_row_with_an_undecryptable_secret_keeps_the_token_for_recovery(sealed_notes, settings):
    note = sealed_notes.objects.create(title="a", secret="hunter2")
    stored = raw_token(sealed_notes, note.pk)
    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2")

    loaded = sealed_notes.objects.get(pk=note.pk)
    loaded.title = "b"
    loaded.save()
    assert raw_token(sealed_notes, note.pk) == stored

    settings.FLEET_ENCRYPTION_KEYS = key_spec("k2", "k1")
    assert sealed_notes.objects.get(pk=note.pk).secret == "hunter2"


def test_a_tampered_row_fails_closed(sealed_notes):
    from django.db import connection

    note = sealed_notes.objects.create(title="a", secret="hunter2")
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {sealed_notes._meta.db_table} SET secret = %s WHERE id = %s", ["hunter2", note.pk])
    assert isinstance(sealed_notes.objects.get(pk=note.pk).secret, UndecryptableSecret)


def test_equality_lookups_on_an_encrypted_field_are_refused(sealed_notes):
    with pytest.raises(FieldError):
        sealed_notes.objects.filter(secret="hunter2").count()


def test_a_malformed_key_ring_stops_start_up(settings):
    from django.apps import apps

    settings.FLEET_ENCRYPTION_KEYS = "k1:" + base64.b64encode(b"sixteen bytes!!!").decode()
    with pytest.raises(ImproperlyConfigured, match="16 bytes"):
        apps.get_app_config("fleet").ready()
