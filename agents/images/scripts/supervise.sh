# Sourced by the entrypoints. `supervise CMD...` runs the runtime as a child of this shell,
# which stays PID 1: the engine's TERM reaches the runtime (a PID 1 without its own handler
# would ignore it), and processes the runtime's tools leave orphaned are reaped, not zombies.
supervise() {
  "$@" &
  child=$!
  trap 'kill -TERM "$child" 2>/dev/null' TERM INT
  trap 'kill -HUP "$child" 2>/dev/null' HUP
  # A trapped signal ends `wait` early: wait again until the runtime itself has exited, and
  # keep the status of that last wait (the shell forgets it once it has been read).
  while :; do
    status=0
    wait "$child" || status=$?
    kill -0 "$child" 2>/dev/null || break
  done
  return "$status"
}

# FLEET_GATEWAY_BIND: lan (all interfaces, the default) or loopback (127.0.0.1 only, for host
# network mode where "all interfaces" are the host's).
gateway_bind() {
  case "${FLEET_GATEWAY_BIND:-lan}" in
    lan | loopback) echo "${FLEET_GATEWAY_BIND:-lan}" ;;
    *)
      echo "fleet: FLEET_GATEWAY_BIND must be lan or loopback, not '${FLEET_GATEWAY_BIND}'" >&2
      return 64
      ;;
  esac
}
