"""`/`: a landing page that links to the console, the API docs and health, each of which answers."""

import re

import pytest

from tests.factories.accounts import AdminFactory

pytestmark = pytest.mark.django_db


def test_the_root_is_a_landing_page_whose_links_work(client, settings):
    settings.DEBUG = False

    response = client.get("/")

    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    links = re.findall(r'<a href="([^"]+)"', response.content.decode())  # (the favicon is a static file)
    assert {"/admin/", "/api/docs/", "/api/health"} <= set(links)
    for link in links:
        assert client.get(link, follow=True).status_code == 200, link  # the admin: its sign-in page


def test_the_admin_view_site_link_is_the_landing_page(client):
    client.force_login(AdminFactory())

    assert 'href="/"' in client.get("/admin/").content.decode()
