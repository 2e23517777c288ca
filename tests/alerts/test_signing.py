import base64
import hashlib
import hmac

import pytest

from alerts.channel_config import signing_key
from alerts.signing import signature_headers, webhook_signature

KEY = b"0123456789abcdef0123456789abcdef"


def expected(key: bytes, msg_id: str, ts: int, body: bytes) -> str:
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def test_a_whsec_secret_is_base64_decoded_into_the_key():
    secret = "whsec_" + base64.b64encode(KEY).decode()
    assert webhook_signature(secret=secret, message_id="msg_1", timestamp=1700000000, body=b'{"a":1}') == expected(
        KEY, "msg_1", 1700000000, b'{"a":1}'
    )


def test_any_other_secret_is_used_as_its_utf8_bytes():
    secret = "plain-secret-of-enough-length"
    assert webhook_signature(secret=secret, message_id="m", timestamp=5, body=b"x") == expected(
        secret.encode(), "m", 5, b"x"
    )


def test_a_whsec_secret_that_is_not_base64_is_refused():
    with pytest.raises(ValueError):
        signing_key("whsec_***not-base64***")


def test_without_a_secret_only_the_id_and_timestamp_headers_are_sent():
    assert signature_headers(secret=None, message_id="m", timestamp=7, body=b"{}") == {
        "webhook-id": "m",
        "webhook-timestamp": "7",
    }
