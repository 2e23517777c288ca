"""Host port bookkeeping read from container summaries."""

from __future__ import annotations

import socket

import pytest

from agents.backends.ports import NoFreePort, choose_port, container_ports, port_is_bindable, ports_in_use


def summary(container_id: str, label: str | None = None, published: list[int] = ()) -> dict:
    labels = {"fleet.managed": "true"} | ({"fleet.host_port": label} if label is not None else {})
    ports = [{"PrivatePort": 18789, "PublicPort": port, "Type": "tcp", "IP": "0.0.0.0"} for port in published]
    ports.append({"PrivatePort": 9000, "Type": "tcp"})  # exposed, not published
    return {"Id": container_id, "Labels": labels, "Ports": ports}


def test_a_containers_ports_come_from_its_label_and_its_published_ports():
    assert container_ports(summary("a", "19001")) == {19001}
    assert container_ports(summary("b", None, [19002])) == {19002}
    assert container_ports(summary("c", "not-a-port")) == set()


def test_ports_in_use_lists_every_holder_of_a_port():
    held = ports_in_use([summary("a", "19001"), summary("b", "19001"), summary("c", None, [19005])])
    assert held == {19001: ["a", "b"], 19005: ["c"]}


def test_the_chosen_port_is_in_the_range_and_not_taken():
    for _ in range(50):
        assert choose_port({19000, 19001, 19003}, (19000, 19004)) in {19002, 19004}


def test_a_full_range_raises_a_permanent_no_free_port():
    with pytest.raises(NoFreePort) as caught:
        choose_port({19000, 19001}, (19000, 19001))
    assert caught.value.transient is False


def test_probing_skips_a_port_something_on_this_machine_listens_on():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        busy = listener.getsockname()[1]
        assert not port_is_bindable(busy)
        with pytest.raises(NoFreePort):
            choose_port(set(), (busy, busy), probe_local=True)
        assert choose_port(set(), (busy, busy)) == busy  # a remote engine's ports are not ours to probe
