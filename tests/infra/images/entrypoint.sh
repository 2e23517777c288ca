#!/bin/sh
# Fleet test runtime: serves HTTP /health on the port the control plane hands it, like a real
# runtime's gateway. PID 1 traps TERM so `docker stop` returns at once instead of after 10 s.
PORT="${OPENCLAW_GATEWAY_PORT:-${API_SERVER_PORT:-18789}}"

mkdir -p /www
echo ok >/www/health
# Names only, never values: tests check which variables the workload received.
env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort >/www/env

httpd -f -p "$PORT" -h /www &
server=$!
trap 'kill -TERM "$server" 2>/dev/null; exit 0' TERM INT
wait "$server"
