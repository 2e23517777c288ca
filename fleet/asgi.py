"""The ASGI application the Procfile's `web` process serves (fleet/web.py): Django, through a
one-hop bridge (fleet.edge.wsgi), for every request of Fleet's own origin, and before it the
routes apps register for WebSockets and for the agents' own origins (fleet.edge.routes, from
the apps' ready() during Django's set-up). docs/edge.md says why it is built this way."""

import os

from django.core.wsgi import get_wsgi_application

from fleet.edge.router import EdgeRouter
from fleet.edge.wsgi import WsgiBridge

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
django_application = get_wsgi_application()  # sets Django up
application = EdgeRouter(WsgiBridge(django_application))
