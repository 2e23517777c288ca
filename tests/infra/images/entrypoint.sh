#!/bin/sh
# Fleet test runtime: serves HTTP /health and /readyz on the port the control plane hands it,
# like an OpenClaw gateway (Hermes agents are tested on the real Hermes image); a test makes it
# unready by removing /www/readyz. PID 1 traps TERM so `docker stop` returns at once instead of
# after 10 s.
PORT="${OPENCLAW_GATEWAY_PORT:-${API_SERVER_PORT:-18789}}"

mkdir -p /www
echo ok >/www/health
echo '{"ready":true,"failing":[]}' >/www/readyz
# Names only, never values: tests check which variables the workload received.
env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort >/www/env

httpd -f -p "$PORT" -h /www &
server=$!
trap 'kill -TERM "$server" 2>/dev/null; exit 0' TERM INT
wait "$server"
