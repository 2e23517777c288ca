// The agent page: confirm destructive buttons; follow the logs live (an EventSource on the
// console's follow: it waits on the server's event loop, holding no worker; it reconnects by
// itself where it left off); talk to the agent (a chat turn streamed as server-sent events);
// and while the agent deploys, show its steps and reload when the deploy ends.
"use strict";

(function () {
  function confirmDestructive() {
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.dataset.confirm)) event.preventDefault();
      });
    });
  }

  var MAX_LINES = 2000;
  var RETRY_MS = 10000; // after a refusal (no workload, an engine down)
  var FIRST_TAIL = 200;

  function row(data) {
    var line = document.createElement("div");
    line.className = "fleet-log-line fleet-log-" + data.stream;
    var when = document.createElement("time");
    when.textContent = data.ts.replace("T", " ").slice(0, 19);
    line.appendChild(when);
    line.appendChild(document.createTextNode(data.line));
    return line;
  }

  function followLogs() {
    var box = document.getElementById("agent-logs");
    var state = document.getElementById("agent-logs-state");
    if (!box || !box.dataset.logsUrl || !window.EventSource) return;
    var source = null;

    function open() {
      source = new EventSource(box.dataset.logsUrl + "?tail=" + FIRST_TAIL);
      source.onopen = function () { state.textContent = "live"; };
      source.onmessage = function (event) {
        var atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
        box.appendChild(row(JSON.parse(event.data)));
        while (box.childElementCount > MAX_LINES) box.removeChild(box.firstElementChild);
        if (atBottom) box.scrollTop = box.scrollHeight;
      };
      source.addEventListener("end", function () {
        state.textContent = "the workload's output ended (stopped)"; // until the page reloads
        source.close();
      });
      source.onerror = function () {
        if (source.readyState !== EventSource.CLOSED) {
          state.textContent = "reconnecting…"; // the browser resumes after the last line by itself
          return;
        }
        // Refused (no workload, an engine down, too many streams): say why, try again later.
        fetch(box.dataset.logsUrl + "?tail=0", { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then(function (response) { return response.json(); })
          .then(function (body) { state.textContent = body.error || "reconnecting…"; })
          .catch(function () { state.textContent = "reconnecting…"; });
        window.setTimeout(open, RETRY_MS);
      };
    }

    window.addEventListener("pagehide", function () { if (source) source.close(); });
    open();
  }

  // A chat turn's server-sent events, read from a POST's streamed body.
  function readEvents(response, onEvent) {
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    function pump() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        var blocks = buffer.split("\n\n");
        buffer = blocks.pop();
        blocks.forEach(function (block) {
          var name = "message", data = null;
          block.split("\n").forEach(function (line) {
            if (line.indexOf("event: ") === 0) name = line.slice(7);
            if (line.indexOf("data: ") === 0) data = line.slice(6);
          });
          if (data !== null) onEvent(name, JSON.parse(data));
        });
        return pump();
      });
    }
    return pump();
  }

  function chat() {
    var panel = document.getElementById("agent-chat-panel");
    if (!panel || !window.fetch || !window.TextDecoder) return;
    var log = document.getElementById("agent-chat-log");
    var form = document.getElementById("agent-chat-form");
    var input = document.getElementById("agent-chat-message");
    var state = document.getElementById("agent-chat-state");
    var csrf = (form.ownerDocument.querySelector("input[name=csrfmiddlewaretoken]") || {}).value;
    var sessionId = null;

    function bubble(kind, text) {
      var node = document.createElement("div");
      node.className = "fleet-chat-turn fleet-chat-" + kind;
      node.textContent = text;
      log.appendChild(node);
      log.scrollTop = log.scrollHeight;
      return node;
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var message = input.value;
      if (!message.trim()) return;
      input.value = "";
      bubble("user", message);
      var answer = bubble("agent", "");
      state.textContent = "thinking…";
      fetch(panel.dataset.chatUrl, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "text/event-stream" },
        body: JSON.stringify(sessionId ? { message: message, sessionId: sessionId } : { message: message }),
      }).then(function (response) {
        if (!response.ok) {
          return response.json().then(function (body) { throw new Error(body.error || response.statusText); });
        }
        return readEvents(response, function (name, data) {
          if (name === "delta") answer.textContent += data.text;
          else if (name === "tool") bubble("note", "tool " + data.name + ": " + data.status);
          else if (name === "approval") bubble("note", "waiting for an approval: " + data.command);
          else if (name === "error") bubble("error", data.message);
          else if (name === "done") {
            sessionId = data.sessionId;
            state.textContent = data.usage ? data.usage.inputTokens + " tokens in, " + data.usage.outputTokens + " out" : "";
          }
        });
      }).catch(function (error) {
        bubble("error", error.message);
        state.textContent = "";
      });
    });
  }

  function watchDeploy() {
    var summary = document.getElementById("agent-summary");
    var url = summary && summary.dataset.progressUrl;
    if (!url) return;
    var timer = window.setInterval(function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.json(); })
        .then(function (progress) {
          if (progress.status !== "queued" && progress.status !== "deploying") {
            window.clearInterval(timer);
            window.location.reload();
            return;
          }
          progress.steps.forEach(function (step) {
            var item = document.querySelector('#agent-progress li[data-step="' + step.name + '"]');
            if (item) item.className = "fleet-step-" + step.state;
          });
        })
        .catch(function () { /* the next tick tries again */ });
    }, 2000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    confirmDestructive();
    followLogs();
    chat();
    watchDeploy();
  });
})();
