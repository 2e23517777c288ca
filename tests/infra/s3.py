"""An S3-compatible server on loopback for the backup tests and bench: moto in server mode on
127.0.0.1 and a free port, spoken to with the real boto3 client.

    def test_it_stores(s3_server):
        url = s3_server.storage_url("backups")   # s3://KEY:SECRET@127.0.0.1:PORT/<bucket>/backups?https=false
        s3_server.keys()                         # what the bucket holds
        s3_server.stop()                         # the destination down (stop() is idempotent)

Each test gets a bucket of its own (the server runs for the session).
"""

from __future__ import annotations

import logging
import socket
import uuid
from dataclasses import dataclass, field

import pytest

HOST = "127.0.0.1"
ACCESS_KEY_ID = "AKIAFLEETTESTBACKUPS1"
SECRET_ACCESS_KEY = "fleet-test-secret-access-key-0123456789abcd"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


@dataclass
class S3Server:
    port: int
    bucket: str = field(default_factory=lambda: f"fleet-{uuid.uuid4().hex[:12]}")
    _server: object = None

    def start(self) -> S3Server:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise

        self._server = ThreadedMotoServer(ip_address=HOST, port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def endpoint_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
                            aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY)

    def create_bucket(self) -> None:
        self.client().create_bucket(Bucket=self.bucket)

    def storage_url(self, prefix: str = "") -> str:
        path = f"{self.bucket}/{prefix}" if prefix else self.bucket
        return f"s3://{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}@{HOST}:{self.port}/{path}?https=false"

    def keys(self) -> list[str]:
        listing = self.client().list_objects_v2(Bucket=self.bucket)
        return sorted(item["Key"] for item in listing.get("Contents", ()))

    def uploads_in_progress(self) -> list[str]:
        return [upload["Key"] for upload in self.client().list_multipart_uploads(Bucket=self.bucket).get("Uploads", ())]


@pytest.fixture(scope="session")
def _s3_session_server():
    server = S3Server(port=free_port()).start()
    yield server
    server.stop()


@pytest.fixture
def s3_server(_s3_session_server) -> S3Server:
    """The session's loopback S3 server with a new, empty bucket for this test."""
    server = S3Server(port=_s3_session_server.port, _server=None)
    server.create_bucket()
    return server


@pytest.fixture
def s3_server_own() -> S3Server:
    """A loopback S3 server of this test alone, which the test may stop (the destination down)."""
    server = S3Server(port=free_port()).start()
    server.create_bucket()
    yield server
    server.stop()
