"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

urlpatterns: list = []
