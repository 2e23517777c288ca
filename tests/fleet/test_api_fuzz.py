"""Whatever a client sends, the kernel answers a 2xx or a 4xx with the one error body."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

pytestmark = pytest.mark.urls("tests.fleet.api_urls")

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def assert_error_body_or_success(response):
    assert response.status_code < 500, response.content
    body = response.json()
    if response.status_code >= 400:
        assert isinstance(body.get("error"), str) and body["error"]
        assert isinstance(body.get("code"), str) and body["code"]
        assert set(body) <= {"error", "code", "fields"}


@FUZZ
@given(body=st.binary(max_size=600))
def test_any_bytes_as_json_get_a_clean_answer(body):
    response = APIClient().post("/api/echo", data=body, content_type="application/json")
    assert_error_body_or_success(response)


@FUZZ
@given(payload=json_values | st.fixed_dictionaries({"name": json_values, "count": json_values}))
def test_any_json_value_gets_a_clean_answer(payload):
    response = APIClient().post("/api/echo", data=json.dumps(payload), content_type="application/json")
    assert_error_body_or_success(response)


@FUZZ
@given(
    content_type=st.sampled_from([
        "text/plain", "application/xml", "multipart/form-data; boundary=x", "application/json; charset=utf-16",
        "application/json; charset=nope", "application/octet-stream",
    ]),
    body=st.binary(max_size=200),
)
def test_any_content_type_gets_a_clean_answer(content_type, body):
    response = APIClient().post("/api/echo", data=body, content_type=content_type)
    assert_error_body_or_success(response)


@FUZZ
@given(
    authorization=st.text(max_size=60).filter(lambda s: "\n" not in s and "\r" not in s),
    api_key=st.text(max_size=60).filter(lambda s: "\n" not in s and "\r" not in s),
)
def test_any_credential_headers_get_a_4xx_with_the_error_body(db, authorization, api_key):
    headers = {}
    if authorization:
        headers["HTTP_AUTHORIZATION"] = authorization
    if api_key:
        headers["HTTP_X_API_KEY"] = api_key
    response = APIClient().get("/api/whoami", **headers)
    assert 400 <= response.status_code < 500
    assert_error_body_or_success(response)
