"""Defect 16: the SSRF guard refuses 6to4 and the other IPv6 forms that embed an IPv4 address,
on save of a webhook channel and in the guard itself."""

from __future__ import annotations

import ipaddress

import pytest

from fleet.netsafety import UnsafeTarget, address_risk, check_url

pytestmark = pytest.mark.django_db

EMBEDDED = [
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::",  # 6to4 of 169.254.169.254
    "2002:0808:0808::1",  # 6to4 of a public address: still a relay's business
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "64:ff9b:1::a00:1",  # NAT64 local use
    "::7f00:1",  # IPv4-compatible 127.0.0.1
]


@pytest.mark.parametrize("address", EMBEDDED)
def test_embedded_ipv4_forms_are_refused(address):
    assert address_risk(ipaddress.ip_address(address)) is not None
    with pytest.raises(UnsafeTarget):
        check_url(f"http://[{address}]/hook")


def test_an_ordinary_public_ipv6_address_passes():
    assert address_risk(ipaddress.ip_address("2606:4700:4700::1111")) is None


@pytest.mark.parametrize("address", ["2002:7f00:1::1", "2002:a9fe:a9fe::"])
def test_a_webhook_channel_to_6to4_is_refused_on_save(tenancy, address, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = []
    body = {"name": "r", "eventPattern": "*", "channels": [{"type": "webhook", "url": f"http://[{address}]/h"}]}

    response = tenancy.client("owner").post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules", body,
                                            format="json")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
