// The agent page's terminal (docs/console.md, "Terminal"): "Open a terminal" asks the console for
// a single-use ticket (a POST of the panel's own form, so Django's CSRF check applies), opens the
// WebSocket of /api/agents/:id/terminal it names and shows it in xterm.js (vendored). Keystrokes
// go out as binary frames, the panel's size as {"type":"resize"} text frames; the shell's output
// comes back as binary frames. A browser sees no reason when the server refuses a handshake, so
// after a refusal the panel asks for a ticket again: the console's answer says why.
"use strict";

(function () {
  var CLOSED = {
    1000: "the shell exited",
    1009: "closed: a paste was too large to send at once",
    1011: "closed: the server failed (see its log)",
    4401: "closed: your session ended",
    4403: "closed: you may no longer open this agent's terminal",
    4404: "closed: the agent is gone",
    4408: "closed after a long time without input or output",
    4409: "closed: the agent stopped",
  };

  function start() {
    var form = document.getElementById("agent-terminal-form");
    if (!form || !window.fetch || !window.WebSocket || !window.Terminal || !window.FitAddon) return;
    var box = document.getElementById("agent-terminal");
    var state = document.getElementById("agent-terminal-state");
    var closeButton = document.getElementById("agent-terminal-close");
    var encoder = new TextEncoder();
    var term = null;
    var fit = null;
    var socket = null;
    var leaving = false; // the operator closed it

    function askTicket() {
      return fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin",
                                  headers: { Accept: "application/json" } })
        .then(function (response) {
          return response.json().then(function (body) { return { ok: response.ok, body: body }; });
        });
    }

    function send(data) {
      if (socket && socket.readyState === WebSocket.OPEN) socket.send(data);
    }

    function sendSize() {
      send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));
    }

    function makeTerminal() {
      term = new window.Terminal({ cursorBlink: true, fontSize: 13, scrollback: 5000,
                                   fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace" });
      fit = new window.FitAddon.FitAddon();
      term.loadAddon(fit);
      term.open(box);
      term.onData(function (data) { send(encoder.encode(data)); });
      term.onBinary(function (data) { // bytes as a string of char codes (mouse reports)
        var bytes = new Uint8Array(data.length);
        for (var i = 0; i < data.length; i += 1) bytes[i] = data.charCodeAt(i) & 255;
        send(bytes);
      });
      term.onResize(sendSize);
      window.addEventListener("resize", function () { if (!box.hidden) fit.fit(); });
    }

    function explainRefusal() {
      askTicket()
        .then(function (answer) {
          state.textContent = answer.ok ? "the server refused the terminal; try again" : answer.body.error;
        })
        .catch(function () { state.textContent = "the server refused the terminal"; });
    }

    function open(url) {
      box.hidden = false;
      if (!term) makeTerminal();
      term.reset();
      fit.fit();
      var opened = false;
      leaving = false;
      socket = new WebSocket(url);
      socket.binaryType = "arraybuffer";
      socket.onopen = function () {
        opened = true;
        state.textContent = "connected";
        closeButton.hidden = false;
        sendSize();
        term.focus();
      };
      socket.onmessage = function (event) {
        if (typeof event.data !== "string") term.write(new Uint8Array(event.data));
      };
      socket.onclose = function (event) {
        socket = null;
        closeButton.hidden = true;
        if (!opened) {
          explainRefusal();
          return;
        }
        state.textContent = leaving ? "closed" : CLOSED[event.code] || "the connection was lost";
        term.write("\r\n[" + state.textContent + "]\r\n");
      };
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (socket) return;
      state.textContent = "connecting…";
      askTicket()
        .then(function (answer) {
          if (!answer.ok) {
            state.textContent = answer.body.error;
            return;
          }
          open(answer.body.url);
        })
        .catch(function () { state.textContent = "could not ask for a terminal; try again"; });
    });
    closeButton.addEventListener("click", function () {
      if (!socket) return;
      leaving = true;
      socket.close(1000);
    });
    window.addEventListener("pagehide", function () { if (socket) socket.close(1000); });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
