"""Models from the console: provider keys added, rotated and deleted through llm.services (the
key write-only, never rendered back), an agent's model chosen or returned to the default, and
deploy with a model, each refusing what the API refuses."""

from __future__ import annotations

import pytest

from agents.models import Agent, AgentModel
from llm.models import ProviderKey
from llm.services import key_create
from tests.factories.targets import make_cluster

pytestmark = pytest.mark.django_db

SECRET, ROTATED = "sk-console-5be1f0c2a9", "sk-console-rotated-77d0e1"


def own_key(user) -> ProviderKey:
    return key_create(provider="openai", label="mine", api_key=SECRET, base_url=None, created_by=user, user=user)


def test_an_operator_adds_a_key_that_is_stored_encrypted_and_never_shown(console, platform_admin):
    response = console.post("/admin/llm/providerkey/add/", {"provider": "openai", "label": "ops", "api_key": SECRET,
                                                            "base_url": "", "user": platform_admin.pk})

    assert response.status_code == 302, response.content.decode()[-2000:]
    key = ProviderKey.objects.get(label="ops")
    assert (key.api_key, key.user_id, key.created_by_id) == (SECRET, platform_admin.pk, platform_admin.pk)
    page = console.get(f"/admin/llm/providerkey/{key.pk}/change/").content.decode()
    assert SECRET not in page and 'name="api_key"' in page


def test_a_key_needs_exactly_one_owner_and_the_services_refusals_land_on_the_fields(console, platform_admin):
    no_owner = console.post("/admin/llm/providerkey/add/", {"provider": "openai", "label": "x", "api_key": SECRET})
    no_key = console.post("/admin/llm/providerkey/add/", {"provider": "openai", "label": "x", "api_key": "",
                                                          "user": platform_admin.pk})

    assert no_owner.status_code == 200 and "one user or one workspace" in no_owner.content.decode()
    assert no_key.status_code == 200 and "needs a key" in no_key.content.decode()
    assert not ProviderKey.objects.exists()


def test_an_empty_key_on_a_change_keeps_it_and_a_new_one_rotates_it(console, platform_admin):
    key = own_key(platform_admin)
    url = f"/admin/llm/providerkey/{key.pk}/change/"

    kept = console.post(url, {"label": "renamed", "api_key": "", "base_url": ""})
    assert kept.status_code == 302
    assert ProviderKey.objects.get(pk=key.pk).api_key == SECRET

    rotated = console.post(url, {"label": "renamed", "api_key": ROTATED, "base_url": ""})
    assert rotated.status_code == 302
    assert (ProviderKey.objects.get(pk=key.pk).api_key, ProviderKey.objects.get(pk=key.pk).label) == (ROTATED,
                                                                                                        "renamed")


def test_a_key_in_use_is_not_deleted_and_the_console_says_by_whom(console, platform_admin, tenancy):
    key = own_key(platform_admin)
    agent = tenancy.agent(name="keeps-the-key")
    AgentModel.objects.create(agent=agent, key=key, name="gpt-4o")

    response = console.post(f"/admin/llm/providerkey/{key.pk}/delete/", {"post": "yes"}, follow=True)

    assert "keeps-the-key" in response.content.decode()
    assert ProviderKey.objects.filter(pk=key.pk).exists()


def test_an_operator_chooses_an_agents_model_and_returns_it_to_the_default(console, platform_admin, tenancy):
    agent, key = tenancy.agent(), own_key(platform_admin)
    url = f"/admin/agents/agent/{agent.pk}/model/"

    form = console.get(url).content.decode()
    saved = console.post(url, {"model_key": str(key.pk), "model_name": "gpt-4o-mini",
                               "model_fallbacks": "gpt-4.1-nano, gpt-4o"})

    assert SECRET not in form and "mine (openai)" in form
    assert saved.status_code == 302
    row = AgentModel.objects.get(agent=agent)
    assert (row.key_id, row.name, row.fallbacks) == (key.pk, "gpt-4o-mini", ["gpt-4.1-nano", "gpt-4o"])
    assert "Model: gpt-4o-mini" in console.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()

    cleared = console.post(url, {"use-default": "1"})
    assert cleared.status_code == 302 and not AgentModel.objects.exists()


def test_a_bad_model_name_is_refused_on_its_field(console, platform_admin, tenancy):
    agent, key = tenancy.agent(), own_key(platform_admin)

    response = console.post(f"/admin/agents/agent/{agent.pk}/model/", {"model_key": str(key.pk),
                                                                        "model_name": "two words"})

    assert response.status_code == 200 and "no spaces" in response.content.decode()
    assert not AgentModel.objects.exists()


def test_only_keys_the_operator_may_use_are_offered(console, tenancy):
    agent = tenancy.agent()
    others = own_key(tenancy.outsider)

    form = console.get(f"/admin/agents/agent/{agent.pk}/model/").content.decode()
    forged = console.post(f"/admin/agents/agent/{agent.pk}/model/", {"model_key": str(others.pk),
                                                                      "model_name": "gpt-4o"})

    assert 'id="model-no-keys"' in form
    assert forged.status_code == 200 and not AgentModel.objects.exists()  # not a choice of the form


def test_deploying_from_the_console_with_a_model(console, platform_admin):
    key = own_key(platform_admin)

    response = console.post("/admin/agents/agent/add/", {"name": "with-a-model", "model_key": str(key.pk),
                                                         "model_name": "gpt-4o-mini"})

    agent = Agent.objects.get(name="with-a-model")
    assert response.status_code == 302
    assert AgentModel.objects.get(agent=agent).name == "gpt-4o-mini"


def test_deploying_with_a_key_but_no_model_names_the_field(console, platform_admin):
    response = console.post("/admin/agents/agent/add/", {"name": "half", "model_key": str(own_key(platform_admin).pk)})

    assert response.status_code == 200 and "model name" in response.content.decode().lower()
    assert not Agent.objects.exists()


def test_a_users_and_a_workspaces_pages_list_their_keys_without_the_key(console, tenancy):
    own_key(tenancy.editor)
    key_create(provider="anthropic", label="team-claude", api_key=SECRET, base_url=None, created_by=tenancy.owner,
               workspace=tenancy.workspace)

    user_page = console.get(f"/admin/accounts/user/{tenancy.editor.pk}/change/").content.decode()
    workspace_page = console.get(f"/admin/workspaces/workspace/{tenancy.workspace.pk}/change/").content.decode()

    assert "mine" in user_page and "team-claude" in workspace_page
    assert SECRET not in user_page + workspace_page


def test_a_deploy_from_the_console_says_which_values_the_server_changed(console, settings):
    settings.MAX_RAM_MB = 4096

    response = console.post("/admin/agents/agent/add/", {"name": "too-big", "ram_mb": "999999999"}, follow=True)

    page = response.content.decode()
    assert "ram_mb: 999999999" in page and "4096 applied" in page and "MAX_RAM_MB" in page


def test_the_deploy_form_picks_a_target_by_name_from_those_the_operator_may_use(console):
    cluster = make_cluster(name="prod-cluster")

    form = console.get("/admin/agents/agent/add/").content.decode()
    forged = console.post("/admin/agents/agent/add/", {"name": "elsewhere", "execution_target_id": "k8s:nope"})

    assert f"prod-cluster (k8s:{cluster.pk})" in form and 'name="execution_target_id"' in form
    assert forged.status_code == 200 and not Agent.objects.filter(name="elsewhere").exists()
