import pytest
import requests

from tests.infra.http import Reply


def test_it_records_method_path_query_headers_and_json_body(http_receiver):
    requests.post(
        http_receiver.url_for("/hook?attempt=1"),
        json={"type": "agent.error"},
        headers={"Webhook-Id": "msg_1"},
        timeout=5,
    )

    (request,) = http_receiver.wait_for(1)
    assert request.method == "POST"
    assert request.path == "/hook"
    assert request.query == {"attempt": ["1"]}
    assert request.header("webhook-id") == "msg_1"
    assert request.json() == {"type": "agent.error"}


def test_it_answers_queued_replies_in_order_then_the_default(http_receiver):
    http_receiver.respond_with(500, times=2)
    http_receiver.respond_with(201, body={"ok": True})

    statuses = [requests.get(http_receiver.url, timeout=5).status_code for _ in range(3)]

    assert statuses == [500, 500, 201]
    assert requests.get(http_receiver.url, timeout=5).json() == {"ok": True}


def test_it_serves_per_path_routes_with_fixed_values_and_handlers(http_receiver):
    http_receiver.route("/user", {"login": "octocat"}, method="GET")
    http_receiver.route(
        "/siteverify", lambda request: Reply(200, {"success": request.body == b"response=ok"})
    )

    assert requests.get(http_receiver.url_for("/user"), timeout=5).json() == {"login": "octocat"}
    assert requests.post(http_receiver.url_for("/user"), timeout=5).status_code == 200
    verify = requests.post(http_receiver.url_for("/siteverify"), data={"response": "ok"}, timeout=5)
    assert verify.json() == {"success": True}
    assert len(http_receiver.requests) == 3


def test_it_refuses_connections_while_stopped_and_comes_back_on_the_same_port(http_receiver):
    url = http_receiver.url
    http_receiver.stop()

    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=2)

    http_receiver.start()
    assert http_receiver.url == url
    assert requests.get(url, timeout=5).status_code == 200


def test_a_delayed_reply_makes_a_short_client_timeout_expire(http_receiver):
    http_receiver.respond_with(200, delay=1.0)

    with pytest.raises(requests.Timeout):
        requests.get(http_receiver.url, timeout=0.2)


def test_wait_for_fails_when_too_few_requests_arrive(http_receiver):
    with pytest.raises(AssertionError, match="expected 1 request"):
        http_receiver.wait_for(1, timeout=0.2)


def test_the_factory_gives_independent_servers(make_http_receiver):
    github, google = make_http_receiver(), make_http_receiver()
    github.route("/user", {"id": 1})

    assert github.port != google.port
    assert requests.get(github.url_for("/user"), timeout=5).json() == {"id": 1}
    assert google.requests == []


def test_it_reads_chunked_request_bodies(http_receiver):
    requests.post(http_receiver.url, data=iter([b"hello ", b"world"]), timeout=5)

    assert http_receiver.wait_for(1)[0].body == b"hello world"
