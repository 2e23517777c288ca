#!/usr/bin/env bash
# Start the project's own Docker engine (no bridge, no iptables: this machine cannot program
# netfilter, so containers use host networking) and build the test runtime image.
# Idempotent: an engine that already answers is reused. Progress goes to stderr; stdout carries
# only the last line, so `eval "$(.ci/docker-up.sh)"` exports FLEET_TEST_DOCKER_HOST.
set -euo pipefail
cd "$(dirname "$0")/.."

# Overridable so a second, scratch engine can run beside the shared one.
RUN_DIR="${FLEET_DOCKER_RUN_DIR:-/run/fleet-docker}"
DATA_ROOT="${FLEET_DOCKER_DATA_ROOT:-/var/lib/fleet-docker}"
LOG="${FLEET_DOCKER_LOG:-/var/log/fleet-dockerd.log}"
SOCKET="$RUN_DIR/docker.sock"
PIDFILE="$RUN_DIR/docker.pid"
DOCKER_URL="unix://$SOCKET"
IMAGE=fleet-test-runtime:latest

say() { echo "docker-up: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  say "must run as root (it installs packages and starts dockerd)"
  exit 1
fi

mkdir -p "$RUN_DIR" "$DATA_ROOT"
# Two callers at once (CI and a test session) must not start two daemons.
exec 9>"$RUN_DIR/up.lock"
flock 9

missing=()
{ command -v dockerd && command -v docker; } >/dev/null 2>&1 || missing+=(docker.io)
dpkg -s busybox-static >/dev/null 2>&1 || missing+=(busybox-static)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

engine_answers() { docker -H "$DOCKER_URL" info >/dev/null 2>&1; }

if engine_answers; then
  say "engine already answers on $SOCKET"
else
  if [ -f "$PIDFILE" ] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    rm -f "$PIDFILE"  # left by a daemon that died; dockerd refuses to start over it
  fi
  say "starting dockerd (log: $LOG)"
  # No bridge, no iptables: this machine cannot program netfilter; containers use host mode.
  setsid nohup dockerd \
    --iptables=false --ip-forward=false --ip-masq=false --bridge=none \
    -H "$DOCKER_URL" \
    --data-root "$DATA_ROOT" \
    --exec-root "$RUN_DIR/exec" \
    --pidfile "$PIDFILE" \
    >>"$LOG" 2>&1 </dev/null 9>&- &  # 9>&-: the daemon must not inherit (and hold) the lock
  for _ in $(seq 1 120); do
    engine_answers && break
    sleep 0.5
  done
  if ! engine_answers; then
    say "dockerd did not answer within 60 s; last log lines:"
    tail -n 30 "$LOG" >&2
    exit 1
  fi
  say "engine is up"
fi

# A no-op when the image is already built from the current sources.
DOCKER_HOST="$DOCKER_URL" tests/infra/images/build.sh "$IMAGE" >&2

echo "export FLEET_TEST_DOCKER_HOST=$DOCKER_URL"
