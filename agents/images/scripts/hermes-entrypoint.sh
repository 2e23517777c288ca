#!/bin/sh
# Fleet's Hermes entrypoint (RUNTIMES.md section 2). The image's ENV carries HERMES_HOME (the
# state folder), HOME and API_SERVER_ENABLED; the control plane passes API_SERVER_KEY and
# API_SERVER_PORT. Never echo the environment here: it holds the API key.
set -eu
. /usr/local/lib/fleet/supervise.sh

bind="$(gateway_bind)" || exit 64
if [ -z "${API_SERVER_HOST:-}" ]; then
  if [ "$bind" = loopback ]; then API_SERVER_HOST=127.0.0.1; else API_SERVER_HOST=0.0.0.0; fi
fi
export API_SERVER_HOST
mkdir -p "$HOME"

supervise python -m hermes_cli.main gateway run
