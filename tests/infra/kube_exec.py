"""The kubelet's part of `pods/<name>/exec` for the kmock emulator (tests/infra/kube.py): no
container runs behind an emulated pod, so a pod a test opts in (`RunningCluster.exec_into`) runs
the command on this machine, in a scratch folder, as the kubelet runs it in the container.

The wire is the API server's: a WebSocket of subprotocol `v4.channel.k8s.io`, each message one
channel byte then its data: 0 stdin, 1 stdout, 2 stderr, 3 the exit status (a Status object, sent
once the command ended), 4 a resize (`{"Width": w, "Height": h}`, applied to the TTY with
TIOCSWINSZ, which sends SIGWINCH as a kernel does). With `tty=true` the command gets a pty
(stdout and stderr are its one stream, as kubelet merges them). A connection that closes leaves
its command running, as the container runtimes do (what ends a terminal's processes is Fleet's
own hangup, agents.backends.terminal); whatever is left is killed when the emulator stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import signal
import struct
import tempfile
import termios

import aiohttp.web

PROTOCOL = "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, STATUS, RESIZE = 0, 1, 2, 3, 4
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def _controlling_tty() -> None:  # in the child, after setsid: its stdin becomes its terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _status(code: int) -> bytes:
    if code == 0:
        return json.dumps({"metadata": {}, "status": "Success"}).encode()
    return json.dumps({"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                       "message": f"command terminated with non-zero exit code: {code}",
                       "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}).encode()


class KubeletExec:
    """Serves the exec WebSockets of opted-in pods; remembers what it started."""

    def __init__(self):
        self.processes: list[asyncio.subprocess.Process] = []
        self.scratch = tempfile.mkdtemp(prefix="fleet-kubelet-")

    async def serve(self, request: aiohttp.web.BaseRequest) -> aiohttp.web.WebSocketResponse:
        argv = request.query.getall("command", [])
        tty = request.query.get("tty") == "true"
        socket = aiohttp.web.WebSocketResponse(protocols=(PROTOCOL,))
        await socket.prepare(request)
        if tty:
            await self._tty(socket, argv)
        else:
            await self._pipes(socket, argv, stdin=request.query.get("stdin") == "true")
        return socket

    async def _spawn(self, argv, **streams) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(*argv, cwd=self.scratch, env={**ENV, "HOME": self.scratch},
                                                       start_new_session=True, **streams)
        self.processes.append(process)
        return process

    async def _tty(self, socket, argv) -> None:
        master, child = pty.openpty()
        try:
            process = await self._spawn(argv, stdin=child, stdout=child, stderr=child, preexec_fn=_controlling_tty)
        finally:
            os.close(child)
        loop = asyncio.get_running_loop()
        output: asyncio.Queue = asyncio.Queue()

        def readable() -> None:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every holder of the pty's other end is gone
                data = b""
            if not data:
                loop.remove_reader(master)
            output.put_nowait(data)

        loop.add_reader(master, readable)

        async def send_output() -> None:
            while data := await output.get():
                await socket.send_bytes(bytes([STDOUT]) + data)
            await socket.send_bytes(bytes([STATUS]) + _status(await process.wait()))
            await socket.close()

        def receive(channel: int, data: bytes) -> None:
            if channel == STDIN:
                os.write(master, data)
            elif channel == RESIZE:
                size = json.loads(data)
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", size["Height"], size["Width"], 0, 0))

        sender = asyncio.create_task(send_output())
        try:
            await self._receive(socket, receive)
        finally:
            if not sender.done():  # the client left: the command goes on, unread (see the docstring)
                sender.cancel()
                loop.remove_reader(master)
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await sender
            os.close(master)

    async def _pipes(self, socket, argv, *, stdin: bool) -> None:
        process = await self._spawn(argv, stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

        async def relay(stream, channel: int) -> None:
            while data := await stream.read(65536):
                await socket.send_bytes(bytes([channel]) + data)

        def receive(channel: int, data: bytes) -> None:
            if channel == STDIN and process.stdin is not None:
                process.stdin.write(data)

        receiving = asyncio.create_task(self._receive(socket, receive))
        await asyncio.gather(relay(process.stdout, STDOUT), relay(process.stderr, STDERR))
        await socket.send_bytes(bytes([STATUS]) + _status(await process.wait()))
        await socket.close()
        receiving.cancel()

    @staticmethod
    async def _receive(socket, receive) -> None:
        async for message in socket:
            if message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                data = message.data if isinstance(message.data, bytes) else message.data.encode()
                if data:
                    receive(data[0], data[1:])

    def stop(self) -> None:
        """Kill whatever the tests left running, with everything it started."""
        for process in self.processes:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
