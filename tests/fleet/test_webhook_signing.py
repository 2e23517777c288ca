"""Standard Webhooks, the one implementation (fleet.webhook_signing) alerts and the webhook
channel both sign and verify with: a whsec_ secret is its decoded bytes and one that does not
decode is refused everywhere, any other secret is its UTF-8 bytes, and a header may carry several
signatures."""

import base64
import hashlib
import hmac

import pytest

from fleet.webhook_signing import new_secret, signature, signature_matches, signing_key

KEY = b"0123456789abcdef0123456789abcdef"


def expected(key: bytes, msg_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def test_a_whsec_secret_is_base64_decoded_into_the_key():
    secret = "whsec_" + base64.b64encode(KEY).decode()
    assert signature(secret=secret, message_id="msg_1", timestamp=1700000000, body=b'{"a":1}') == expected(
        KEY, "msg_1", 1700000000, b'{"a":1}')


def test_any_other_secret_is_used_as_its_utf8_bytes():
    secret = "plain-secret-of-enough-length"
    assert signature(secret=secret, message_id="m", timestamp=5, body=b"x") == expected(secret.encode(), "m", 5, b"x")


def test_a_whsec_secret_that_is_not_base64_is_refused_never_signed_with_its_text():
    with pytest.raises(ValueError):
        signing_key("whsec_***not-base64***")
    with pytest.raises(ValueError):
        signature(secret="whsec_***not-base64***", message_id="m", timestamp=5, body=b"x")
    assert not signature_matches(secret="whsec_***", message_id="m", timestamp=5, body=b"x", header="v1,AAAA")


def test_a_header_matches_when_one_of_its_signatures_is_ours():
    secret = new_secret()
    ours = signature(secret=secret, message_id="m", timestamp=5, body=b"x")
    assert signature_matches(secret=secret, message_id="m", timestamp=5, body=b"x", header=f"v1,AAAA {ours}")
    assert not signature_matches(secret=secret, message_id="m", timestamp=5, body=b"y", header=ours)
    assert len(signing_key(secret)) == 32
