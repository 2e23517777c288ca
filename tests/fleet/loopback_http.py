"""Real HTTP(S) servers on 127.0.0.1 for outbound-safety tests."""

from __future__ import annotations

import datetime
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


class _Handler(BaseHTTPRequestHandler):
    """/ok, /host (echoes Host), /redirect?to=URL, /chain/N (N redirects), /slow?s=seconds."""

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.server.paths.append(self.path)
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/ok":
            return self._reply(200, b"ok")
        if parts.path == "/host":
            return self._reply(200, self.headers.get("Host", "").encode())
        if parts.path == "/redirect":
            return self._reply(302, b"", location=query["to"][0])
        if parts.path.startswith("/chain/"):
            remaining = int(parts.path.rsplit("/", 1)[1])
            if remaining:
                return self._reply(302, b"", location=f"/chain/{remaining - 1}")
            return self._reply(200, b"end")
        if parts.path == "/slow":
            time.sleep(float(query.get("s", ["2"])[0]))
            return self._reply(200, b"late")
        return self._reply(404, b"no")

    def _reply(self, status: int, body: bytes, location: str | None = None):
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that time out or refuse the certificate hang up mid-reply, on purpose


class LoopbackServer:
    def __init__(self, tls_dir: Path | None = None):
        self.httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.paths = []
        self.scheme = "http"
        self.cafile = None
        if tls_dir is not None:
            certfile, keyfile = _self_signed_localhost(tls_dir)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile, keyfile)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme, self.cafile = "https", str(certfile)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def paths(self) -> list[str]:
        return self.httpd.paths

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _self_signed_localhost(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the name "localhost" only (not its IP)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return certfile, keyfile

