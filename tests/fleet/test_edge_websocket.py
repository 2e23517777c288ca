"""WebSocket routes of Fleet's own origin (fleet.edge.websocket): the caller of a handshake by the
API's credential rules (headers; the cookie only from an allowed Origin; a single-use ticket),
and one way every route refuses: before accepting, the API's answer or a 4000 + status close;
after, a 4000 + status close with the error's code as its reason. The terminal's own refusals are
tests/agents/terminal's."""

from __future__ import annotations

import json
import time

import pytest

from accounts.tokens import session_token_issue, sessions_revoke
from fleet.api.principal import Principal
from fleet.edge import routes
from fleet.edge.routes import register_websocket
from fleet.edge.tickets import ticket_issue
from fleet.edge.websocket import PRINCIPAL_CLAIM, close_code_of, socket_caller, websocket_route
from fleet.errors import (
    Conflict,
    ConflictingAuth,
    DaemonUnreachable,
    Forbidden,
    NotAuthenticated,
    NotFound,
    TooManyStreams,
)
from tests.infra.asgi import edge_socket
from workspaces.principals import principal_ref

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/test/socket"
DENIAL = {"websocket.http.response": {}}


@pytest.fixture
def whoami(monkeypatch):
    """A route that answers who called it (and the ticket's claims), taking tickets for "test"."""
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def handler(socket):
        caller = await socket_caller(socket.scope, ticket_purpose="test")
        await socket.accept()
        principal = caller.principal
        await socket.send_text(json.dumps({"email": principal.user.email, "kind": principal.kind,
                                           "claims": {k: v for k, v in caller.claims.items() if k != PRINCIPAL_CLAIM}}))

    register_websocket(rf"^{PATH}$", handler)


def _answer(path: str = PATH, **kwargs) -> dict | int:
    """What the route said, or the code it refused with."""
    with edge_socket(path, **kwargs) as socket:
        if not socket.accepted:
            return socket.close_code
        return json.loads(socket.receive())


def _ticket(user, **claims) -> str:
    ticket, _ = ticket_issue(purpose="test", claims={PRINCIPAL_CLAIM: principal_ref(Principal(user=user)), **claims},
                             seconds=60)
    return ticket


def test_close_codes_are_4000_plus_the_apis_status():
    assert [close_code_of(error) for error in (ConflictingAuth(), NotAuthenticated(), Forbidden(), NotFound(),
                                               Conflict(), TooManyStreams(), DaemonUnreachable())] == \
        [4400, 4401, 4403, 4404, 4409, 4429, 4502]


def test_no_credential_is_refused_before_accepting_with_4401(whoami):
    with edge_socket(PATH) as socket:
        assert not socket.accepted
        assert (socket.close_code, socket.close_reason) == (4401, "not_authenticated")


def test_a_server_with_the_denial_response_answers_the_apis_status_and_error_body(whoami):
    with edge_socket(PATH, extensions=DENIAL) as socket:
        assert not socket.accepted and socket.close_code == 401
        assert json.loads(socket.denial_body)["code"] == "not_authenticated"


def test_a_bearer_session_and_an_api_key_are_read_as_the_api_reads_them(whoami, tenancy):
    token = session_token_issue(user=tenancy.editor)
    assert _answer(headers={"authorization": f"Bearer {token}"}) == \
        {"email": tenancy.editor.email, "kind": "session", "claims": {}}
    assert _answer(headers={"x-api-key": tenancy.key("agents:read")})["kind"] == "api_key"
    assert _answer(headers={"authorization": "Bearer not-a-token"}) == 4401
    assert _answer(headers={"authorization": "Basic abc"}) == 4401
    assert _answer(headers={"authorization": f"Bearer {token}", "x-api-key": tenancy.key("agents:read")}) == 4400


def test_the_cookie_counts_only_from_fleets_own_or_a_trusted_origin(whoami, tenancy, settings):
    cookie = f"service_auth={session_token_issue(user=tenancy.viewer)}"
    assert _answer(headers={"cookie": cookie, "origin": "http://testserver"})["email"] == tenancy.viewer.email
    # Cross-site WebSocket hijacking: a foreign page's handshake carries the cookie too.
    assert _answer(headers={"cookie": cookie, "origin": "https://evil.example"}) == 4403
    assert _answer(headers={"cookie": cookie, "origin": "null"}) == 4403
    assert _answer(headers={"cookie": cookie}) == 4403  # browsers always send Origin; no Referer fallback
    settings.CSRF_TRUSTED_ORIGINS = ["https://console.example"]
    assert _answer(headers={"cookie": cookie, "origin": "https://console.example"})["email"] == tenancy.viewer.email


def test_a_foreign_origin_cookie_is_csrf_failed(whoami, tenancy):
    cookie = f"service_auth={session_token_issue(user=tenancy.viewer)}"
    with edge_socket(PATH, headers={"cookie": cookie, "origin": "https://evil.example"}) as socket:
        assert (socket.close_code, socket.close_reason) == (4403, "csrf_failed")


def test_a_ticket_opens_once_with_its_claims(whoami, tenancy):
    ticket = _ticket(tenancy.admin, agent="a1")

    assert _answer(f"{PATH}?ticket={ticket}") == {"email": tenancy.admin.email, "kind": "session",
                                                   "claims": {"agent": "a1"}}
    with edge_socket(f"{PATH}?ticket={ticket}") as socket:  # used twice
        assert (socket.close_code, socket.close_reason) == (4401, "invalid_credentials")


def test_a_ticket_decides_over_the_browsers_cookie_but_not_beside_a_header(whoami, tenancy):
    cookie = f"service_auth={session_token_issue(user=tenancy.viewer)}"
    answer = _answer(f"{PATH}?ticket={_ticket(tenancy.admin)}", headers={"cookie": cookie})
    assert answer["email"] == tenancy.admin.email
    bearer = f"Bearer {session_token_issue(user=tenancy.viewer)}"
    assert _answer(f"{PATH}?ticket={_ticket(tenancy.admin)}", headers={"authorization": bearer}) == 4400


def test_an_expired_ticket_an_unknown_one_and_one_of_a_revoked_session_are_refused(whoami, tenancy):
    assert _answer(f"{PATH}?ticket=made-up") == 4401

    short, _ = ticket_issue(purpose="test", claims={PRINCIPAL_CLAIM: {"kind": "session"}}, seconds=1)
    time.sleep(1.5)
    assert _answer(f"{PATH}?ticket={short}") == 4401

    ticket = _ticket(tenancy.admin)
    sessions_revoke(user=tenancy.admin)  # signing out everywhere ends the ticket's session too
    assert _answer(f"{PATH}?ticket={ticket}") == 4401


def test_a_route_without_tickets_ignores_one_in_its_query(monkeypatch, tenancy):
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def handler(socket):
        await socket_caller(socket.scope)  # takes no ticket
        await socket.accept()

    register_websocket(r"^/test/noticket$", handler)
    assert _answer(f"/test/noticket?ticket={_ticket(tenancy.admin)}") == 4401


def test_after_accepting_an_error_closes_with_its_code_and_anything_else_with_1011(monkeypatch):
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def refusing(socket):
        await socket.accept()
        raise TooManyStreams()

    @websocket_route
    async def failing(socket):
        await socket.accept()
        raise RuntimeError("a bug")

    register_websocket(r"^/test/refusing$", refusing)
    register_websocket(r"^/test/failing$", failing)
    with edge_socket("/test/refusing", extensions=DENIAL) as socket:  # accepted: a close, whatever the server
        assert socket.accepted and socket.closed.wait(5)
        assert (socket.close_code, socket.close_reason) == (4429, "too_many_streams")
    with edge_socket("/test/failing") as socket:
        assert socket.accepted and socket.closed.wait(5)
        assert (socket.close_code, socket.close_reason) == (1011, "internal_error")


def test_a_route_that_returns_leaves_no_socket_open(monkeypatch):
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def done(socket):
        await socket.accept()

    register_websocket(r"^/test/done$", done)
    with edge_socket("/test/done") as socket:
        assert socket.accepted
        assert socket.closed.wait(5) and socket.close_code == 1000


def test_a_5xx_refusal_names_no_internal_address(monkeypatch):
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def engine_down(socket):
        raise DaemonUnreachable("The engine at unix:///run/secret/docker.sock cannot be reached.")

    register_websocket(r"^/test/down$", engine_down)
    with edge_socket("/test/down", extensions=DENIAL) as socket:
        assert socket.close_code == 502
        assert json.loads(socket.denial_body)["code"] == "daemon_unreachable"
        assert b"/run/secret" not in socket.denial_body


def test_the_callers_address_is_read_as_the_apis_throttles_read_it(monkeypatch, settings):
    monkeypatch.setattr(routes, "_websockets", list(routes._websockets))

    @websocket_route
    async def address(socket):
        await socket.accept()
        await socket.send_text(socket.client_ip)

    register_websocket(r"^/test/address$", address)
    forwarded = {"x-forwarded-for": "203.0.113.9"}
    with edge_socket("/test/address", headers=forwarded) as socket:
        assert socket.receive() == "127.0.0.1"  # no proxy is trusted: the peer's address
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    with edge_socket("/test/address", headers=forwarded) as socket:
        assert socket.receive() == "203.0.113.9"
