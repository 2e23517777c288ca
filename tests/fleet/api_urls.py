"""A test-only URLconf exercising the kernel's API plumbing (tests/fleet/test_api_*.py)."""

from django.contrib.auth import get_user_model
from django.http import Http404
from django.urls import include, path, re_path
from rest_framework import serializers
from rest_framework.response import Response

from fleet.api.permissions import IsAuthenticated
from fleet.api.throttling import IPRateThrottle
from fleet.api.views import PUBLIC, ApiView
from fleet.errors import Conflict
from fleet.views import api_not_found


class WhoAmIApi(ApiView):
    access = {"GET": (IsAuthenticated,)}

    def get(self, request):
        principal = self.principal
        return Response({"email": principal.user.email, "kind": principal.kind})


class EchoApi(ApiView):
    access = {"POST": PUBLIC}
    authentication_classes = ()
    audited = False  # the input layer's fuzz runs it without a database; it changes nothing

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=5)
        count = serializers.IntegerField(min_value=0)

    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(data.validated_data)


class BoomApi(ApiView):
    access = {"GET": PUBLIC}

    def get(self, request):
        raise RuntimeError("a bug, not bad input")


class ConflictApi(ApiView):
    access = {"GET": PUBLIC}

    def get(self, request):
        raise Conflict("The name is taken.")


class MissingApi(ApiView):
    access = {"GET": PUBLIC}

    def get(self, request):
        raise Http404("no such row")


class RemovedMeanwhileApi(ApiView):
    """A row found, then gone when the view locks it (another request deleted it meanwhile)."""

    access = {"GET": PUBLIC}

    def get(self, request):
        return Response({"email": get_user_model().objects.get(pk=0).email})


class TwoPerMinute(IPRateThrottle):
    scope = "test_two_per_minute"
    rate = "2/1m"


class ThrottledApi(ApiView):
    access = {"GET": PUBLIC}
    authentication_classes = ()
    throttle_classes = (TwoPerMinute,)

    def get(self, request):
        return Response({"ok": True})


api_patterns = [
    path("whoami", WhoAmIApi.as_view()),
    path("echo", EchoApi.as_view()),
    path("boom", BoomApi.as_view()),
    path("conflict", ConflictApi.as_view()),
    path("missing", MissingApi.as_view()),
    path("removed-meanwhile", RemovedMeanwhileApi.as_view()),
    path("throttled", ThrottledApi.as_view()),
    re_path(r"^.*$", api_not_found),
]

urlpatterns = [path("api/", include(api_patterns))]
