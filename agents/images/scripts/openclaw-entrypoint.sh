#!/bin/sh
# Fleet's OpenClaw entrypoint (RUNTIMES.md section 1). The image's ENV carries the state
# folder, HOME, TMPDIR and the offline flags; the control plane passes OPENCLAW_GATEWAY_TOKEN
# and OPENCLAW_GATEWAY_PORT. Never echo the environment here: it holds the gateway token.
set -eu
. /usr/local/lib/fleet/supervise.sh

bind="$(gateway_bind)" || exit 64
mkdir -p "$HOME" "$OPENCLAW_STATE_DIR/logs"

# A first start gets a config that keeps the runtime off the network. It is a plain file in
# the state volume: the control plane edits it later through config.patch, which replaces it.
if [ ! -e "$OPENCLAW_CONFIG_PATH" ]; then
  cat >"$OPENCLAW_CONFIG_PATH.fleet-new" <<JSON
{
  "models": { "catalogRefresh": { "enabled": false } },
  "update": { "checkOnStart": false },
  "logging": { "file": "$OPENCLAW_STATE_DIR/logs/openclaw.log" }
}
JSON
  chmod 600 "$OPENCLAW_CONFIG_PATH.fleet-new"
  mv "$OPENCLAW_CONFIG_PATH.fleet-new" "$OPENCLAW_CONFIG_PATH"
fi

supervise node /opt/openclaw/node_modules/openclaw/openclaw.mjs gateway run --allow-unconfigured --bind "$bind"
