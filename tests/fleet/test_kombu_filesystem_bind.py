"""make run's embedded broker (kombu's filesystem transport) with workers declaring their queues at
once (fleet.kombu_fixes): kombu created the exchange file before locking it, so a second process
read it empty and its worker exited ("Unrecoverable error: JSONDecodeError"). The same for a
message read while its sender was writing it. Real processes, one shared broker folder."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

from kombu import Connection, Exchange, Queue

from fleet.kombu_fixes import kombu_filesystem_patch

PROCESSES = 8
BINDS_EACH = 40

DECLARE = """
import sys
from kombu import Connection, Exchange, Queue
from fleet.kombu_fixes import kombu_filesystem_patch

kombu_filesystem_patch()
folder, name = sys.argv[1], sys.argv[2]
options = {"data_folder_in": folder + "/out", "data_folder_out": folder + "/out", "control_folder": folder + "/control"}
exchange = Exchange("runtime", type="direct")
with Connection("filesystem://", transport_options=options) as conn:
    for n in range(int(sys.argv[3])):
        Queue(f"{name}-{n}", exchange, routing_key=f"{name}-{n}")(conn.default_channel).declare()
"""


def _options(folder: Path) -> dict:
    (folder / "out").mkdir(parents=True, exist_ok=True)
    return {"data_folder_in": str(folder / "out"), "data_folder_out": str(folder / "out"),
            "control_folder": str(folder / "control")}


def test_queues_declared_at_once_by_many_processes_are_all_bound(tmp_path):
    _options(tmp_path)
    declaring = [subprocess.Popen([sys.executable, "-c", DECLARE, str(tmp_path), f"w{n}", str(BINDS_EACH)],
                                  cwd=Path(__file__).resolve().parents[2], stderr=subprocess.PIPE, text=True)
                 for n in range(PROCESSES)]
    errors = [p.communicate(timeout=60)[1] for p in declaring]

    assert [p.returncode for p in declaring] == [0] * PROCESSES, errors
    table = json.loads((tmp_path / "control" / "runtime.exchange").read_text())
    assert len({queue for _, _, queue in table}) == PROCESSES * BINDS_EACH  # every binding kept, once


def test_an_exchange_file_left_empty_by_its_creator_reads_as_no_bindings(tmp_path):
    kombu_filesystem_patch()
    options = _options(tmp_path)
    (tmp_path / "control").mkdir()
    (tmp_path / "control" / "runtime.exchange").write_bytes(b"")  # created, not yet written

    with Connection("filesystem://", transport_options=options) as conn:
        channel = conn.default_channel
        assert channel.get_table("runtime") == []
        Queue("provision", Exchange("runtime", type="direct"), routing_key="runtime")(channel).declare()
        assert [q.queue for q in channel.get_table("runtime")] == ["provision"]


SEND = """
import sys
from kombu import Connection
from fleet.kombu_fixes import kombu_filesystem_patch

kombu_filesystem_patch()
folder, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
options = {"data_folder_in": folder + "/out", "data_folder_out": folder + "/out", "control_folder": folder + "/control"}
with Connection("filesystem://", transport_options=options) as conn:
    for n in range(count):
        conn.default_channel._put("work", {"id": f"{name}-{n}"})
"""
SENDERS, MESSAGES_EACH = 4, 400


def test_messages_read_while_they_are_sent_are_read_whole_and_all(tmp_path):
    kombu_filesystem_patch()
    options = _options(tmp_path)
    sending = [subprocess.Popen([sys.executable, "-c", SEND, str(tmp_path), f"s{n}", str(MESSAGES_EACH)],
                                cwd=Path(__file__).resolve().parents[2], stderr=subprocess.PIPE, text=True)
               for n in range(SENDERS)]
    received = []
    deadline = time.monotonic() + 60
    with Connection("filesystem://", transport_options=options) as conn:
        channel = conn.default_channel
        while len(received) < SENDERS * MESSAGES_EACH and time.monotonic() < deadline:
            try:
                received.append(channel._get("work")["id"])  # raised JSONDecodeError on a file read empty
            except Empty:
                time.sleep(0.001)
    errors = [p.communicate(timeout=60)[1] for p in sending]

    assert [p.returncode for p in sending] == [0] * SENDERS, errors
    assert sorted(received) == sorted(f"s{s}-{n}" for s in range(SENDERS) for n in range(MESSAGES_EACH))
