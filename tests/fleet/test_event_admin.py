import pytest
from django.utils import timezone

from fleet.models import Event
from tests.factories.accounts import AdminFactory, UserFactory


def make_event(kind: str, message: str = "") -> Event:
    return Event.objects.create(kind=kind, message=message, occurred_at=timezone.now())


@pytest.fixture
def admin_client(client, db):
    client.force_login(AdminFactory())
    return client


def test_the_event_list_shows_events_and_filters_by_kind(admin_client):
    make_event("agent.error", "boom")
    make_event("agent.started", "up")

    everything = admin_client.get("/admin/fleet/event/")
    errors_only = admin_client.get("/admin/fleet/event/?kind=agent.error")

    assert everything.status_code == 200
    assert b"boom" in everything.content and b"up</td>" in everything.content
    assert b"boom" in errors_only.content and b"up</td>" not in errors_only.content


def test_events_cannot_be_added_changed_or_deleted_in_the_admin(admin_client):
    event = make_event("agent.error", "boom")

    assert admin_client.get("/admin/fleet/event/add/").status_code == 403
    detail = admin_client.get(f"/admin/fleet/event/{event.pk}/change/")
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    assert admin_client.post(f"/admin/fleet/event/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Event.objects.filter(pk=event.pk).exists()


def test_a_regular_user_cannot_see_the_event_log(client, db):
    client.force_login(UserFactory())
    response = client.get("/admin/fleet/event/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
