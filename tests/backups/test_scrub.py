"""A destination's error as rows, events and logs show it: no credential, one line, bounded."""

from backups.scrub import ERROR_MAX, scrubbed


def test_the_credentials_and_any_urls_user_and_password_are_replaced():
    text = "PUT failed\nfor s3://AKIA123:topsecret42@host/b with key AKIA123 and secret topsecret42"

    shown = scrubbed(text, ("AKIA123", "topsecret42"))

    assert shown == "PUT failed for s3://[REDACTED]@host/b with key [REDACTED] and secret [REDACTED]"


def test_a_long_error_is_cut_to_one_bounded_line():
    shown = scrubbed("x" * 2000, ())

    assert len(shown) == ERROR_MAX and shown.endswith("…")
