#!/usr/bin/env bash
# Stop the Docker engine started by .ci/docker-up.sh. Stopping a stopped engine is not an error.
set -euo pipefail

PIDFILE="${FLEET_DOCKER_RUN_DIR:-/run/fleet-docker}/docker.pid"

if [ ! -f "$PIDFILE" ]; then
  echo "docker-down: no engine running" >&2
  exit 0
fi
pid="$(cat "$PIDFILE")"
if kill -TERM "$pid" 2>/dev/null; then
  # dockerd stops its containers and containerd before it exits.
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "docker-down: dockerd ignored TERM for 30 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
fi
rm -f "$PIDFILE"
echo "docker-down: engine stopped" >&2
