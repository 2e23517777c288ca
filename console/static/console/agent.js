// The agent page: confirm destructive buttons, show the logs live by asking for the lines after
// the last one every 2 s (short requests: a held stream would keep one of the server's few web
// workers busy for as long as the page stays open), and while the agent deploys, show its steps
// and reload when the deploy ends.
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
  var POLL_MS = 2000; // how often an open page asks for new lines
  var RETRY_MS = 10000; // after a refusal (no workload, an engine down) or a failed request
  var FIRST_TAIL = 200;
  var POLL_TAIL = 1000;

  function pollLogs() {
    var box = document.getElementById("agent-logs");
    var state = document.getElementById("agent-logs-state");
    if (!box || !box.dataset.logsUrl || !window.fetch) return;
    var lastTs = null; // the ts of the newest line shown
    var shownAtLastTs = {}; // how many of each line were shown at that instant (`since` includes it)
    var timer = null;
    var waiting = false; // the tab is hidden: ask again when it shows

    function row(data) {
      var line = document.createElement("div");
      line.className = "fleet-log-line fleet-log-" + data.stream;
      var when = document.createElement("time");
      when.textContent = data.ts.replace("T", " ").slice(0, 19);
      line.appendChild(when);
      line.appendChild(document.createTextNode(data.line));
      return line;
    }

    function show(lines) {
      var atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
      var skip = Object.assign({}, shownAtLastTs);
      lines.forEach(function (data) {
        var key = data.stream + "\n" + data.line;
        if (data.ts === lastTs && skip[key] > 0) {
          skip[key] -= 1; // already on the page
          return;
        }
        if (data.ts !== lastTs) {
          lastTs = data.ts;
          shownAtLastTs = {};
          skip = {};
        }
        shownAtLastTs[key] = (shownAtLastTs[key] || 0) + 1;
        box.appendChild(row(data));
      });
      while (box.childElementCount > MAX_LINES) box.removeChild(box.firstElementChild);
      if (atBottom) box.scrollTop = box.scrollHeight;
    }

    function next(ms) {
      timer = window.setTimeout(tick, ms);
    }

    function tick() {
      timer = null;
      if (document.hidden) {
        waiting = true;
        return;
      }
      var query = lastTs === null ? "?tail=" + FIRST_TAIL : "?tail=" + POLL_TAIL + "&since=" + encodeURIComponent(lastTs);
      fetch(box.dataset.logsUrl + query, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          return response.json().then(function (body) { return { ok: response.ok, body: body }; });
        })
        .then(function (answer) {
          if (!answer.ok) {
            state.textContent = answer.body.error; // no workload, an engine down: say why, ask later
            next(RETRY_MS);
            return;
          }
          show(answer.body.lines);
          if (answer.body.status === "stopped") {
            state.textContent = "the workload's output ended (stopped)"; // until the page reloads
            return;
          }
          state.textContent = "live";
          next(POLL_MS);
        })
        .catch(function () {
          state.textContent = "reconnecting…";
          next(RETRY_MS);
        });
    }

    document.addEventListener("visibilitychange", function () {
      if (!document.hidden && waiting) {
        waiting = false;
        tick();
      }
    });
    window.addEventListener("pagehide", function () { if (timer !== null) window.clearTimeout(timer); });
    tick();
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
    pollLogs();
    watchDeploy();
  });
})();
