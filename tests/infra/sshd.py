"""A real OpenSSH server on a loopback port in front of the test Docker engine, for Remote Docker.

    server = SshServer.start(docker_socket)     # /usr/sbin/sshd -D -f <generated config>
    server.port, server.username, server.private_key_pem, server.password, server.fingerprint
    server.restart_with_new_host_key()         # the same port, another host key
    server.close()                             # stop it and remove its directory

The server listens on 127.0.0.1 only, lets in one user, `fleet-ssh` (AllowUsers), by key or by
password, and allows stream-local forwarding, which is how Fleet reaches the engine's socket.
That user is a system account without a shell or home (created by `ensure_ssh_user`, and by
.ci/run) in the group that owns the engine's socket, so it reaches Docker without root: root
login stays off. Its password is random, made once per machine and kept in a root-only file so
concurrent test sessions agree on it. Needs root (to create the user and run sshd) and
openssh-server (.ci/run installs it); without them the tests skip, and fail under CI=true.
"""

from __future__ import annotations

import grp
import io
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from tests.support import free_loopback_port, need_service

SSHD = "/usr/sbin/sshd"
SSH_USER = "fleet-ssh"
PASSWORD_FILE = Path("/var/lib/fleet-test-ssh/password")
START_TIMEOUT = 10.0


def openssh_private_key(passphrase: str | None = None) -> str:
    """A new Ed25519 private key in OpenSSH format (encrypted with `passphrase` if given)."""
    key = ed25519.Ed25519PrivateKey.generate()
    encryption = (serialization.BestAvailableEncryption(passphrase.encode()) if passphrase
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption).decode()


def authorized_line(private_pem: str, passphrase: str | None = None) -> str:
    key = paramiko.Ed25519Key.from_private_key(io.StringIO(private_pem), password=passphrase)
    return f"{key.get_name()} {key.get_base64()} fleet-test"


def _can_run() -> str:
    if os.geteuid() != 0:
        return "the sshd fixture needs root (to create its user and run sshd)"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is missing: install openssh-server (.ci/run does)"
    return ""


def ensure_ssh_user(docker_socket: str) -> str:
    """The test user's password; the user is created (in the socket's group) when missing."""
    group = grp.getgrgid(os.stat(docker_socket).st_gid).gr_name
    exists = subprocess.run(["id", "-u", SSH_USER], capture_output=True).returncode == 0
    if not exists:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "--groups", group, SSH_USER], check=True, capture_output=True)
    else:
        subprocess.run(["usermod", "--append", "--groups", group, SSH_USER], check=True, capture_output=True)
    if not PASSWORD_FILE.exists() or not exists:
        PASSWORD_FILE.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        password = secrets.token_urlsafe(24)
        subprocess.run(["chpasswd"], input=f"{SSH_USER}:{password}", text=True, check=True, capture_output=True)
        PASSWORD_FILE.write_text(password)
        PASSWORD_FILE.chmod(0o600)
    return PASSWORD_FILE.read_text().strip()


@dataclass
class SshServer:
    directory: Path
    port: int
    password: str = field(repr=False)
    private_key_pem: str = field(repr=False)
    process: subprocess.Popen | None = None
    fingerprint: str = ""
    username: str = SSH_USER

    @classmethod
    def start(cls, docker_socket: str) -> SshServer:
        problem = _can_run()
        need_service(not problem, problem)
        password = ensure_ssh_user(docker_socket)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        # sshd reads authorized_keys as the user: a directory of its own that user may enter
        # (pytest's tmp_path is root's alone). The host key in it stays root's (0600).
        directory = Path(tempfile.mkdtemp(prefix="fleet-sshd-"))
        directory.chmod(0o755)
        private_key = openssh_private_key()
        (directory / "authorized_keys").write_text(authorized_line(private_key) + "\n")
        (directory / "authorized_keys").chmod(0o644)
        server = cls(directory=directory, port=free_loopback_port(), password=password, private_key_pem=private_key)
        server._write_host_key()
        server._run()
        return server

    def authorize(self, private_pem: str, passphrase: str | None = None) -> None:
        with (self.directory / "authorized_keys").open("a") as keys:
            keys.write(authorized_line(private_pem, passphrase) + "\n")

    def _write_host_key(self) -> None:
        path = self.directory / "host_key"
        path.write_text(openssh_private_key())
        path.chmod(0o600)
        key = paramiko.Ed25519Key.from_private_key_file(str(path))
        from agents.backends.ssh import host_key_fingerprint

        self.fingerprint = host_key_fingerprint(key)

    def _config(self) -> Path:
        d = self.directory
        config = d / "sshd_config"
        config.write_text(
            "\n".join([
                f"Port {self.port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {d / 'host_key'}",
                f"PidFile {d / 'sshd.pid'}",
                f"AuthorizedKeysFile {d / 'authorized_keys'}",
                "StrictModes no",  # the key file lives under /tmp, which is world-writable
                "UsePAM no",
                "PasswordAuthentication yes",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin no",
                f"AllowUsers {SSH_USER}",
                "AllowStreamLocalForwarding local",
                "AllowTcpForwarding local",  # "no" also refuses stream-local channels (sshd)
                "X11Forwarding no",
                "PermitTTY no",
                f"LogLevel {os.environ.get('FLEET_TEST_SSHD_LOG_LEVEL', 'ERROR')}",
                "",
            ])
        )
        return config

    def _run(self) -> None:
        # Its log goes to a file: a pipe nobody reads would fill up and stall it.
        self.log_path = self.directory / "sshd.log"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(self._config())],
                                            stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log_path.read_text(errors='replace')[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                    if probe.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"sshd did not listen on 127.0.0.1:{self.port} within {START_TIMEOUT} s")

    def restart_with_new_host_key(self) -> None:
        """The same address presenting another host key (a reinstalled or impostor host)."""
        self.stop()
        self._write_host_key()
        self._run()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.process = None

    def close(self) -> None:
        self.stop()
        if not os.environ.get("FLEET_TEST_SSHD_LOG_LEVEL"):  # debugging: keep sshd.log to read
            shutil.rmtree(self.directory, ignore_errors=True)


