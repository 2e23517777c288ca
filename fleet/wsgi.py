import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
application = get_wsgi_application()

from .web import forget_dead_workers  # noqa: E402 - after setup: a respawned worker cleans up

forget_dead_workers()
