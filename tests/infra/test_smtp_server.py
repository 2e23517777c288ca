import smtplib

import pytest
from django.core.mail import EmailMultiAlternatives, send_mail


def test_djangos_smtp_backend_delivers_to_the_loopback_server(smtp_server):
    send_mail("Agent down", "agent-1 stopped", "fleet@example.com", ["ops@example.com"])

    (message,) = smtp_server.wait_for(1)
    assert message.mail_from == "fleet@example.com"
    assert message.rcpt_tos == ["ops@example.com"]
    assert message.subject == "Agent down"
    assert message.text.strip() == "agent-1 stopped"


def test_it_exposes_the_text_part_of_a_multipart_message(smtp_server):
    mail = EmailMultiAlternatives("Hi", "plain body", "fleet@example.com", ["a@example.com"])
    mail.attach_alternative("<p>html body</p>", "text/html")
    mail.send()

    assert smtp_server.wait_for(1)[0].text.strip() == "plain body"


def test_a_scripted_failure_rejects_the_next_message_only(smtp_server):
    smtp_server.fail_next("550 5.1.1 No such user")

    with pytest.raises(smtplib.SMTPDataError) as rejected:
        send_mail("One", "body", "fleet@example.com", ["ops@example.com"])
    send_mail("Two", "body", "fleet@example.com", ["ops@example.com"])

    assert rejected.value.smtp_code == 550
    assert [m.subject for m in smtp_server.wait_for(1)] == ["Two"]


def test_a_stopped_server_refuses_connections(smtp_server):
    smtp_server.stop()

    with pytest.raises(ConnectionRefusedError):
        send_mail("Lost", "body", "fleet@example.com", ["ops@example.com"])
