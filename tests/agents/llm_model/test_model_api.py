"""GET/PUT/DELETE /agents/:id/model and the deploy's `model`: who may choose which key, every
error of the body at once, the key never shown, and a key in use kept from deletion."""

from __future__ import annotations

import pytest
from celery.signals import before_task_publish

from agents.llm_model.services import model_apply_refused
from agents.models import AgentModel
from fleet.errors import UpstreamFailure
from llm.models import ProviderKey
from llm.services import key_create
from tests.support import client_for

pytestmark = pytest.mark.django_db

SECRET = "sk-model-api-0123456789"


def user_key(user, provider="openai", **fields) -> ProviderKey:
    return key_create(provider=provider, label="k", api_key=SECRET, base_url=fields.get("base_url"),
                      created_by=user, user=user)


def workspace_key(tenancy, workspace=None) -> ProviderKey:
    return key_create(provider="openai", label="team", api_key=SECRET, base_url=None, created_by=tenancy.owner,
                      workspace=workspace or tenancy.workspace)


def url(agent) -> str:
    return f"/api/agents/{agent.pk}/model"


def test_an_agent_without_a_model_says_so(tenancy):
    response = tenancy.client("viewer").get(url(tenancy.agent()))

    assert response.status_code == 200
    assert response.json() == {"keyId": None, "provider": None, "name": None, "fallbacks": [], "source": "none",
                               "modelRouting": "direct", "appliedAt": None, "applyError": None}


def test_the_owner_chooses_a_model_of_their_own_key_and_never_sees_the_key(tenancy):
    agent = tenancy.agent()
    key = user_key(tenancy.agent_owner)

    response = tenancy.client("agent_owner").put(url(agent), {"keyId": str(key.pk), "name": "gpt-4o-mini",
                                                              "fallbacks": ["gpt-4.1-nano"]}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == {"keyId": str(key.pk), "provider": "openai", "name": "gpt-4o-mini",
                               "fallbacks": ["gpt-4.1-nano"], "source": "agent", "modelRouting": "direct",
                               "appliedAt": None, "applyError": None}
    assert SECRET not in response.content.decode()
    assert tenancy.client("viewer").get(url(agent)).json() == response.json()
    row = AgentModel.objects.get(agent=agent)
    assert (row.key_id, row.name, row.fallbacks) == (key.pk, "gpt-4o-mini", ["gpt-4.1-nano"])


def test_an_editor_uses_a_key_of_the_agents_workspace(tenancy):
    agent, key = tenancy.agent(), workspace_key(tenancy)

    response = tenancy.client("editor").put(url(agent), {"keyId": str(key.pk), "name": "gpt-4o"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["source"] == "agent"


@pytest.mark.parametrize("whose", ["another_user", "other_workspace", "unknown"])
def test_a_key_the_caller_may_not_use_is_403_key_not_usable(tenancy, whose):
    agent = tenancy.agent()
    key_id = {
        "another_user": lambda: user_key(tenancy.editor).pk,
        "other_workspace": lambda: workspace_key(tenancy, tenancy.other_workspace).pk,
        "unknown": lambda: "6b0f3c3e-5d1c-4a61-9a35-2b1f4f1a0c11",
    }[whose]()

    response = tenancy.client("agent_owner").put(url(agent), {"keyId": str(key_id), "name": "gpt-4o"}, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "key_not_usable"
    assert not AgentModel.objects.exists()


def test_a_viewer_of_the_keys_workspace_may_not_use_it_even_on_their_own_agent(tenancy):
    agent = tenancy.agent()  # agent_owner is a viewer of the workspace
    response = tenancy.client("agent_owner").put(url(agent), {"keyId": str(workspace_key(tenancy).pk),
                                                              "name": "gpt-4o"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "key_not_usable"


def test_a_workspace_key_uses_its_workspaces_keys_only(tenancy):
    agent = tenancy.agent()
    client = tenancy.client("key:agents:write")

    ok = client.put(url(agent), {"keyId": str(workspace_key(tenancy).pk), "name": "gpt-4o"}, format="json")
    personal = client.put(url(agent), {"keyId": str(user_key(tenancy.owner).pk), "name": "gpt-4o"}, format="json")

    assert ok.status_code == 200, ok.content
    assert personal.status_code == 403 and personal.json()["code"] == "key_not_usable"


def test_every_bad_field_is_named_at_once(tenancy):
    response = tenancy.client("agent_owner").put(url(tenancy.agent()), {
        "keyId": "not-a-uuid", "name": "has space", "fallbacks": ["a", "a"], "extra": 1}, format="json")

    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"keyId", "name", "fallbacks", "extra"}
    assert response.json()["code"] == "validation_error"


@pytest.mark.parametrize("body", [[], "gpt-4o", None, {"keyId": None, "name": None},
                                  {"keyId": "x", "name": "m", "fallbacks": "m2"},
                                  {"keyId": "x", "name": "m", "fallbacks": ["m1", "m2", "m3", "m4", "m5", "m6"]}])
def test_malformed_bodies_are_400(tenancy, body):
    response = tenancy.client("agent_owner").put(url(tenancy.agent()), body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"


@pytest.mark.parametrize(("caller", "method", "status"), [
    ("anonymous", "get", 401), ("anonymous", "put", 401), ("anonymous", "delete", 401),
    ("outsider", "get", 404), ("outsider", "put", 404),
    ("other-key", "get", 404), ("other-key", "put", 404),
    ("viewer", "put", 403), ("viewer", "delete", 403),
    ("key:workspaces:read", "get", 403), ("key:agents:read", "put", 403),
    ("key:agents:read", "get", 200), ("editor", "delete", 200), ("admin", "get", 200),
])
def test_access(tenancy, caller, method, status):
    agent = tenancy.agent()
    body = {"keyId": str(user_key(tenancy.editor).pk), "name": "gpt-4o"} if method == "put" else None
    response = getattr(tenancy.client(caller), method)(url(agent), body, format="json")
    assert response.status_code == status, response.content


def test_delete_returns_the_agent_to_the_platform_default(tenancy, settings):
    agent, own, default = tenancy.agent(), user_key(tenancy.agent_owner), user_key(tenancy.platform_admin)
    settings.DEFAULT_LLM_KEY, settings.DEFAULT_LLM_MODEL = str(default.pk), "gpt-4.1-mini"
    client = tenancy.client("agent_owner")
    client.put(url(agent), {"keyId": str(own.pk), "name": "gpt-4o"}, format="json")

    response = client.delete(url(agent))

    assert response.status_code == 200
    assert response.json()["source"] == "default"
    assert (response.json()["keyId"], response.json()["name"]) == (str(default.pk), "gpt-4.1-mini")
    assert not AgentModel.objects.exists()


def test_a_key_an_agent_uses_cannot_be_deleted_and_names_the_agent(tenancy):
    agent, key = tenancy.agent(name="uses-it"), user_key(tenancy.agent_owner)
    client = tenancy.client("agent_owner")
    client.put(url(agent), {"keyId": str(key.pk), "name": "gpt-4o"}, format="json")

    refused = client.delete(f"/api/llm/keys/{key.pk}")

    assert refused.status_code == 409
    assert refused.json()["code"] == "key_in_use" and "uses-it" in refused.json()["error"]
    client.delete(url(agent))
    assert client.delete(f"/api/llm/keys/{key.pk}").status_code == 200


def test_the_platform_default_key_cannot_be_deleted(tenancy, settings):
    key = user_key(tenancy.platform_admin)
    settings.DEFAULT_LLM_KEY, settings.DEFAULT_LLM_MODEL = str(key.pk), "gpt-4o"

    refused = client_for(tenancy.platform_admin).delete(f"/api/llm/keys/{key.pk}")

    assert refused.status_code == 409 and "DEFAULT_LLM_KEY" in refused.json()["error"]


def test_a_key_deleted_with_its_user_takes_the_choice_with_it(tenancy):
    agent, key = tenancy.agent(), user_key(tenancy.agent_owner)
    tenancy.client("agent_owner").put(url(agent), {"keyId": str(key.pk), "name": "gpt-4o"}, format="json")
    other = tenancy.agent(owner=tenancy.editor)
    tenancy.client("editor").put(url(other), {"keyId": str(user_key(tenancy.editor).pk), "name": "gpt-4o"},
                                 format="json")

    ProviderKey.objects.filter(pk=key.pk).delete()  # as the user's deletion cascades

    assert not AgentModel.objects.filter(agent=agent).exists()
    assert AgentModel.objects.filter(agent=other).exists()


# -- deploy --------------------------------------------------------------------------------


def test_a_deploy_with_a_model_stores_it(tenancy):
    key = user_key(tenancy.editor)
    response = client_for(tenancy.editor).post("/api/agents/deploy", {
        "name": "with-model", "model": {"keyId": str(key.pk), "name": "gpt-4o-mini"}}, format="json")

    assert response.status_code == 201, response.content
    assert SECRET not in response.content.decode()
    row = AgentModel.objects.get(agent_id=response.json()["id"])
    assert (row.key_id, row.name, row.applied_at) == (key.pk, "gpt-4o-mini", None)


def test_a_deploy_with_a_model_of_another_users_key_is_403_and_stores_nothing(tenancy):
    key = user_key(tenancy.admin)
    response = client_for(tenancy.editor).post("/api/agents/deploy", {
        "name": "not-mine", "model": {"keyId": str(key.pk), "name": "gpt-4o"}}, format="json")

    assert response.status_code == 403 and response.json()["code"] == "key_not_usable"
    assert not tenancy.editor.agents.exists()


def test_a_deploy_names_a_bad_model_beside_a_bad_placement(tenancy):
    response = client_for(tenancy.editor).post("/api/agents/deploy", {
        "runtime_family": "nope", "model": {"keyId": str(user_key(tenancy.editor).pk), "name": "bad name"}},
        format="json")

    assert response.status_code == 400
    assert {"runtime_family", "model.name"} <= set(response.json()["fields"]), response.json()


def test_a_deploy_by_a_workspace_key_uses_the_workspaces_key(tenancy):
    response = client_for(api_key=tenancy.key("agents:write")).post("/api/agents/deploy", {
        "model": {"keyId": str(workspace_key(tenancy).pk), "name": "gpt-4o"}}, format="json")
    assert response.status_code == 201, response.content
    assert AgentModel.objects.get(agent_id=response.json()["id"]).name == "gpt-4o"


def test_a_rotation_queues_one_apply_per_serving_agent_with_ids_only(tenancy, django_capture_on_commit_callbacks):
    key = user_key(tenancy.agent_owner)
    serving, stopped = tenancy.agent(status="running"), tenancy.agent()
    for agent in (serving, stopped):
        AgentModel.objects.create(agent=agent, key=key, name="gpt-4o")
    published = []

    def record(sender=None, body=None, headers=None, **kwargs):
        published.append((sender, repr(body) + repr(headers)))

    before_task_publish.connect(record)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = tenancy.client("agent_owner").patch(f"/api/llm/keys/{key.pk}", {"apiKey": "sk-rotated-31f0a9"},
                                                           format="json")
    finally:
        before_task_publish.disconnect(record)

    assert response.status_code == 200
    assert [sender for sender, _ in published] == ["agents.apply_model"]
    assert str(serving.pk) in published[0][1]
    assert "sk-rotated-31f0a9" not in published[0][1] and SECRET not in published[0][1]


def test_a_refusal_is_kept_on_the_row_without_the_key(tenancy):
    agent, key = tenancy.agent(), user_key(tenancy.agent_owner)
    AgentModel.objects.create(agent=agent, key=key, name="gpt-4o")

    model_apply_refused(agent_id=agent.pk, error=UpstreamFailure(f"invalid config: apiKey {SECRET} rejected"))

    shown = tenancy.client("agent_owner").get(url(agent)).json()
    assert shown["applyError"] == "invalid config: apiKey [REDACTED] rejected" and shown["appliedAt"] is None
