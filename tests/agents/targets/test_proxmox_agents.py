"""The Proxmox target through the API: /api/admin/proxmox (settings without the secret, grants,
test), deploys decided by grants, and the nemoclaw profile refused on this target."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.resources import ResourceChange, agent_resources_change
from fleet.api.principal import Principal
from fleet.errors import ValidationFailed
from fleet.models import Event
from tests.infra.provisioning import provision_to_end
from tests.support import client_for

pytestmark = pytest.mark.django_db

TOKEN_ID, TOKEN_SECRET = "fleet@pve!agents", "5d0c8f7a-2b3c-4d5e-9f60-718293a4b5c6"


@pytest.fixture
def pve(fakepve, fakepve_cafile, settings):
    fakepve.apitokens[TOKEN_ID] = TOKEN_SECRET
    settings.PROXMOX_URL, settings.PROXMOX_NODE = fakepve.url, "pve1"
    settings.PROXMOX_TOKEN_ID, settings.PROXMOX_TOKEN_SECRET = TOKEN_ID, TOKEN_SECRET
    settings.PROXMOX_VERIFY_TLS = fakepve_cafile
    settings.PROXMOX_TEMPLATE = "local:vztmpl/fleet-runtime.tar.zst"
    return fakepve


def test_the_platform_admin_sees_the_target_grants_it_and_tests_it(tenancy, pve):
    admin = client_for(tenancy.platform_admin)
    shown = admin.get("/api/admin/proxmox").json()
    assert shown["configured"] is True and shown["tokenId"] == TOKEN_ID and shown["node"] == "pve1"
    assert TOKEN_SECRET not in str(shown)
    granted = admin.patch("/api/admin/proxmox", {"grants": {"users": [str(tenancy.editor.id)]}}, format="json")
    assert granted.json()["grants"]["users"] == [str(tenancy.editor.id)]
    assert admin.post("/api/admin/proxmox/test").json() == {"ok": True, "version": "Proxmox VE 9.0.10 (release 9.0)",
                                                            "error": None}


def test_the_test_says_what_is_wrong_when_proxmox_is_not_configured(tenancy, settings):
    settings.PROXMOX_URL = ""
    result = client_for(tenancy.platform_admin).post("/api/admin/proxmox/test").json()
    assert result["ok"] is False and "PROXMOX_URL" in result["error"]


def test_a_granted_user_deploys_to_proxmox_and_others_get_a_400(tenancy, pve):
    client_for(tenancy.platform_admin).patch("/api/admin/proxmox", {"grants": {"users": [str(tenancy.editor.id)]}},
                                             format="json")
    ok = client_for(tenancy.editor).post("/api/agents/deploy", {"deploy_target": "proxmox"}, format="json")
    assert ok.status_code == 201 and ok.json()["execution_target_id"] == "proxmox"
    refused = client_for(tenancy.viewer).post("/api/agents/deploy", {"deploy_target": "proxmox"}, format="json")
    assert refused.status_code == 400 and "execution_target_id" in refused.json()["fields"]


def test_nemoclaw_is_refused_on_proxmox(tenancy, pve, settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]
    answer = client_for(tenancy.platform_admin).post(
        "/api/agents/deploy", {"deploy_target": "proxmox", "sandbox_profile": "nemoclaw"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["fields"]["sandbox_profile"] == ["The nemoclaw profile is not available on proxmox."]
    assert not Agent.objects.exists()


def test_a_bigger_disk_grows_the_containers_root_filesystem_and_a_smaller_one_is_refused(tenancy, pve, settings):
    settings.AGENT_READY_TIMEOUT_SECONDS = 1
    admin = Principal(user=tenancy.platform_admin)
    agent_id = client_for(tenancy.platform_admin).post(
        "/api/agents/deploy", {"deploy_target": "proxmox", "disk_gb": 6}, format="json").json()["id"]
    provision_to_end(agent_id=agent_id)  # no runtime answers inside the fake's container: it ends in error
    agent = Agent.objects.get(pk=agent_id)
    ct = pve.ct(int(agent.container_id))
    assert "size=6G" in ct.config["rootfs"]

    agent_resources_change(principal=admin, agent=agent, change=ResourceChange(disk_gb=15))
    provision_to_end(agent_id=agent_id)  # the redeploy: the same container, its rootfs grown
    agent = Agent.objects.get(pk=agent_id)
    assert agent.container_id == str(ct.vmid) and agent.disk_gb == 15 and "size=15G" in ct.config["rootfs"]

    events = Event.objects.filter(agent_id=agent_id).count()
    with pytest.raises(ValidationFailed) as refused:
        agent_resources_change(principal=admin, agent=agent, change=ResourceChange(disk_gb=10, ram_mb=2048))
    assert refused.value.fields == {"disk_gb": [(
        "The disk cannot shrink from 15 GB to 10 GB: a Proxmox container's root filesystem can grow but never "
        "shrink. Keep 15 GB or more.")]}
    unchanged = Agent.objects.get(pk=agent_id)
    assert (unchanged.disk_gb, unchanged.ram_mb, unchanged.status) == (15, agent.ram_mb, agent.status)
    assert Event.objects.filter(agent_id=agent_id).count() == events and "size=15G" in ct.config["rootfs"]
