from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from .admin_login import admin_login
from .api.routing import indexed
from .metrics import API_NOT_FOUND_URL_NAME, metrics_view
from .views import HealthView, api_not_found, home

api_patterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    # The document and its viewer answer without the slash too (every other route has none).
    path("schema", SpectacularAPIView.as_view(), name="schema-bare"),
    path("docs", SpectacularSwaggerView.as_view(url_name="schema"), name="docs-bare"),
    path("health", HealthView.as_view(), name="health"),
    path("", include("audit.urls")),
    path("", include("accounts.urls")),
    path("", include("workspaces.urls")),
    path("", include("llm.urls")),
    path("", include("agents.urls")),
    path("", include("agents.targets.urls")),
    path("", include("alerts.urls")),
    path("", include("channels.urls")),
    path("", include("integrations.urls")),
    path("", include("sandbox.urls")),
    path("", include("model_gateway.urls")),
    path("", include("backups.urls")),
    # [\s\S]: a path holding a newline (%0A) is caught too, not left to Django's HTML 404.
    re_path(r"^[\s\S]*$", api_not_found, name=API_NOT_FOUND_URL_NAME),
]
api_patterns = indexed(api_patterns)  # each app's routes skipped at once when the first segment is none of theirs

urlpatterns = [
    path("", home, name="home"),  # a landing page with links, not a 404
    path("admin/login/", admin_login, name="admin-login"),  # throttled; the rest of the admin as is
    path("admin/", admin.site.urls),
    path("api", api_not_found),  # the bare prefix too answers the JSON 404, not an HTML page
    path("api/", include(api_patterns)),
    path("metrics", metrics_view, name="metrics"),
]

# Errors raised before or outside a view still answer the JSON body under /api.
handler400 = "fleet.views.bad_request"
handler403 = "fleet.views.permission_denied"
handler404 = "fleet.views.page_not_found"
handler500 = "fleet.views.server_error"

admin.site.site_header = "Fleet control plane"
admin.site.site_title = "Fleet admin"
admin.site.index_title = "Agents, workspaces and alerts"
