from django.urls import path

from . import api

urlpatterns = [
    path("audit", api.AuditListApi.as_view(), name="audit-list"),
]
