"""The terminal on a real Hermes (the runtime image on the test engine), through Fleet's ASGI
application: `id -u` comes back as the image's user, resizes reach the TTY, bad frames are
ignored, and each way a terminal ends (the client leaves, `exit`, the idle timeout, a revoked
session) closes it with its code, ends every process it started and is recorded, without a
keystroke. A user's fourth terminal is refused."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest

from accounts.tokens import sessions_revoke
from agents.models import TerminalSession, WorkspaceAgent
from tests.agents.backends.terminal_support import MARKED_PROCESSES
from tests.agents.terminal.support import bearer, output_until, path_of, terminal_path
from tests.infra.asgi import edge_socket
from tests.infra.docker import exec_in
from tests.infra.runtimes import RUNTIME_UID
from tests.support import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.runtime, pytest.mark.django_db(transaction=True)]
# Shells in the runtime's container, which they leave as they found it: the session's runtimes serve.
SHARES_RUNTIMES = True


@pytest.fixture
def agent(hermes_runtime, tenancy, docker_settings):
    """The agent_owner's agent whose workload is the module's Hermes container."""
    agent = hermes_runtime.agent(owner=tenancy.agent_owner, container_id=hermes_runtime.container.id)
    WorkspaceAgent.objects.create(workspace=tenancy.workspace, agent=agent)
    return agent


def record_of(agent) -> TerminalSession:
    return TerminalSession.objects.filter(agent=agent).latest("started_at")


def ended(agent) -> TerminalSession | None:
    return TerminalSession.objects.filter(agent=agent, ended_at__isnull=False).order_by("-started_at").first()


def marked(hermes_runtime) -> list[bytes]:
    """The Hermes container's processes started from a terminal."""
    return exec_in(hermes_runtime.container, MARKED_PROCESSES).output.split()


def test_id_u_typed_in_a_browsers_terminal_comes_back_as_the_images_user(agent, tenancy, hermes_runtime):
    url = tenancy.client("agent_owner").post(f"/api/agents/{agent.pk}/terminal/session").json()["url"]

    with edge_socket(path_of(url)) as socket:
        assert socket.accepted
        socket.send_bytes(b'echo "u=$(id -u)="\n')
        assert output_until(socket, rb"u=(\d+)=").group(1) == str(RUNTIME_UID).encode()
        assert record_of(agent).ended_at is None  # open while it lives

    wait_until(lambda: ended(agent) is not None)
    record = ended(agent)
    assert (record.end_reason, record.via, record.user_id, record.agent_name) == (
        "closed", "api", tenancy.agent_owner.pk, agent.name)
    assert record.client_ip == "127.0.0.1" and record.ended_at >= record.started_at
    assert "id -u" not in json.dumps([str(value) for value in record.__dict__.values()])  # no keystroke kept
    wait_until(lambda: marked(hermes_runtime) == [])  # its shell ended with it


def test_a_resize_reaches_the_tty_and_bad_frames_are_ignored(agent, tenancy):
    with edge_socket(terminal_path(agent), headers=bearer(tenancy.agent_owner)) as socket:
        for bad in ("not json", '{"type":"resize","cols":0,"rows":24}', '{"type":"resize","cols":"80","rows":24}',
                    '{"type":"resize","cols":80,"rows":100000}', '{"type":"something else"}', "[1, 2]", "x" * 5000):
            socket.send_text(bad)
        socket.send_text(json.dumps({"type": "resize", "cols": 123, "rows": 45}))
        # The image has no stty: Python asks the TTY itself (TIOCGWINSZ), as `stty size` would.
        socket.send_bytes(b"python3 -c 'import os; s = os.get_terminal_size(); print(f\"size={s.columns}x{s.lines}=\")'"
                          b"\n")
        assert output_until(socket, rb"size=(\d+x\d+)=").group(1) == b"123x45"


def test_exit_closes_the_socket_with_1000(agent, tenancy):
    with edge_socket(terminal_path(agent), headers=bearer(tenancy.agent_owner)) as socket:
        socket.send_bytes(b"exit\n")
        assert socket.closed.wait(15)
        assert (socket.close_code, socket.close_reason) == (1000, "exited")
    wait_until(lambda: ended(agent) is not None)
    assert ended(agent).end_reason == "exited"


def test_the_idle_timeout_closes_it_with_4408(agent, tenancy, settings, hermes_runtime):
    settings.TERMINAL_IDLE_SECONDS = 1
    with edge_socket(terminal_path(agent), headers=bearer(tenancy.agent_owner)) as socket:
        socket.send_bytes(b"sleep 300 &\n")
        assert socket.closed.wait(15)
        assert (socket.close_code, socket.close_reason) == (4408, "idle_timeout")
    wait_until(lambda: ended(agent) is not None)
    assert ended(agent).end_reason == "idle"
    wait_until(lambda: marked(hermes_runtime) == [])  # the sleep it started went too


def test_a_session_revoked_while_its_terminal_is_open_closes_it_with_4401(agent, tenancy, settings):
    settings.TERMINAL_RECHECK_SECONDS = 0.5
    with edge_socket(terminal_path(agent), headers=bearer(tenancy.agent_owner)) as socket:
        assert socket.accepted
        sessions_revoke(user=tenancy.agent_owner)
        assert socket.closed.wait(15)
        assert (socket.close_code, socket.close_reason) == (4401, "invalid_credentials")
    wait_until(lambda: ended(agent) is not None)
    assert ended(agent).end_reason == "revoked"


def test_a_users_fourth_terminal_is_refused_until_one_closes(agent, tenancy, settings):
    assert settings.TERMINAL_LIMIT_PER_USER == 3
    headers = bearer(tenancy.agent_owner)
    with ExitStack() as open_terminals:
        first = [open_terminals.enter_context(edge_socket(terminal_path(agent), headers=headers)) for _ in range(3)]
        assert all(socket.accepted for socket in first)
        with edge_socket(terminal_path(agent), headers=headers) as fourth:
            assert (fourth.accepted, fourth.close_code, fourth.close_reason) == (False, 4429, "too_many_streams")
    with edge_socket(terminal_path(agent), headers=headers) as again:  # the three gave their slots back
        assert again.accepted
