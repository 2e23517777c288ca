// The agent page: confirm destructive buttons, follow the logs live (server-sent events; the
// server ends each follow after a while and EventSource reconnects where it left off), and
// while the agent deploys, show its steps and reload when the deploy ends.
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

  function followLogs() {
    var box = document.getElementById("agent-logs");
    var state = document.getElementById("agent-logs-state");
    if (!box || !box.dataset.streamUrl || !window.EventSource) return;
    var source = new EventSource(box.dataset.streamUrl + "?tail=200");
    source.onopen = function () { state.textContent = "live"; };
    source.onmessage = function (event) {
      var data = JSON.parse(event.data);
      var atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
      var row = document.createElement("div");
      row.className = "fleet-log-line fleet-log-" + data.stream;
      var when = document.createElement("time");
      when.textContent = data.ts.replace("T", " ").slice(0, 19);
      row.appendChild(when);
      row.appendChild(document.createTextNode(data.line));
      box.appendChild(row);
      while (box.childElementCount > MAX_LINES) box.removeChild(box.firstElementChild);
      if (atBottom) box.scrollTop = box.scrollHeight;
    };
    // The output ended (the container stopped) or cannot be read: stop asking until the page reloads.
    source.addEventListener("end", function () {
      source.close();
      state.textContent = "the workload's output ended (stopped)";
    });
    source.addEventListener("problem", function (event) {
      source.close();
      state.textContent = JSON.parse(event.data).error;
    });
    source.onerror = function () { if (state.textContent === "live") state.textContent = "reconnecting…"; };
    window.addEventListener("pagehide", function () { source.close(); });
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
    watchDeploy();
  });
})();
