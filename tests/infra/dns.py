"""Made-up names for tests (the resolver on this machine is off limits): `dns_answers(monkeypatch)`
makes socket.getaddrinfo answer them, one list of addresses per lookup (the last one repeats), so
a name can change its answer between a check and a connect (DNS rebinding); other names resolve
for real."""

from __future__ import annotations

import socket


def dns_answers(monkeypatch) -> dict[str, list[list[str]]]:
    answers: dict[str, list[list[str]]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in answers:
            queue = answers[host]
            addresses = queue.pop(0) if len(queue) > 1 else queue[0]
            if not addresses:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return [a for ip in addresses for a in real(ip, port, *args, **kwargs)]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers
