"""The fake model answers like an OpenAI-compatible server, and calls a tool once at most."""

from __future__ import annotations

import json
import threading

import requests

from tests.infra.fake_model import ANSWER, USAGE

EXEC_TOOL = [{"type": "function", "function": {"name": "exec", "parameters": {"type": "object"}}}]


def _chat(fake_model, **body):
    body.setdefault("messages", [{"role": "user", "content": "hi"}])
    return requests.post(fake_model.base_url + "/chat/completions", json={"model": fake_model.model_id, **body},
                         timeout=10)


def test_it_lists_its_model_and_answers_with_a_fixed_usage(fake_model):
    models = requests.get(fake_model.base_url + "/models", timeout=5).json()
    answer = _chat(fake_model).json()

    assert [m["id"] for m in models["data"]] == [fake_model.model_id]
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": ANSWER}
    assert answer["usage"] == USAGE


def test_it_streams_server_sent_events_ending_with_the_usage(fake_model):
    response = _chat(fake_model, stream=True, stream_options={"include_usage": True})

    events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert response.headers["Content-Type"] == "text/event-stream" and events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == ANSWER
    assert chunks[-1]["usage"] == USAGE


def test_an_offered_tool_call_is_made_once_then_it_answers_plainly(fake_model):
    fake_model.offer_tool_call("node --version")

    first = _chat(fake_model, tools=EXEC_TOOL).json()["choices"][0]
    again = _chat(fake_model, tools=EXEC_TOOL).json()["choices"][0]

    call = first["message"]["tool_calls"][0]["function"]
    assert (first["finish_reason"], call["name"], json.loads(call["arguments"])) == (
        "tool_calls", "exec", {"command": "node --version"})
    assert again["message"]["content"] == ANSWER and "tool_calls" not in again["message"]


def test_a_held_answer_waits_for_release(fake_model):
    fake_model.hold()
    answers, asked = [], len(fake_model.requests)
    asking = threading.Thread(target=lambda: answers.append(_chat(fake_model).status_code))
    asking.start()
    fake_model.wait_for(asked + 1, timeout=5)
    asking.join(timeout=0.3)
    assert asking.is_alive() and answers == []

    fake_model.release()
    asking.join(timeout=5)
    assert answers == [200]
