"""The alert webhook's headers: the signature (fleet.webhook_signing, tested in
tests/fleet/test_webhook_signing.py) only when the channel has a secret."""

from alerts.signing import signature_headers


def test_without_a_secret_only_the_id_and_timestamp_headers_are_sent():
    assert signature_headers(secret=None, message_id="m", timestamp=7, body=b"{}") == {
        "webhook-id": "m",
        "webhook-timestamp": "7",
    }


def test_with_a_secret_the_signature_header_is_added():
    headers = signature_headers(secret="plain-secret-of-enough-length", message_id="m", timestamp=7, body=b"{}")
    assert headers["webhook-signature"].startswith("v1,")
