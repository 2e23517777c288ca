#!/usr/bin/env bash
# Build fleet-test-runtime:latest from a busybox-static rootfs with `docker import`: no registry
# is reachable here, so nothing is pulled. Uses DOCKER_HOST (or the docker CLI default).
# The image is labelled with a digest of this folder, and rebuilt only when that changed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
IMAGE="${1:-fleet-test-runtime:latest}"

SOURCES_DIGEST="$(cat "$HERE/build.sh" "$HERE/entrypoint.sh" "$HERE/allocate" | sha256sum | cut -c1-16)"
built="$(docker image inspect --format '{{ index .Config.Labels "fleet.test_image_digest" }}' "$IMAGE" 2>/dev/null || true)"
if [ "$built" = "$SOURCES_DIGEST" ]; then
  exit 0  # up to date
fi

BUSYBOX=/bin/busybox
if ldd "$BUSYBOX" >/dev/null 2>&1; then
  # busybox-static's binary; a dynamic busybox would not run in an empty rootfs.
  echo "build.sh: $BUSYBOX is not the static build; install busybox-static" >&2
  exit 1
fi

ROOTFS="$(mktemp -d)"
trap 'rm -rf "$ROOTFS"' EXIT

mkdir -p "$ROOTFS"/{bin,etc,tmp,www,proc,sys,dev,usr/local/bin}
chmod 1777 "$ROOTFS/tmp"
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$ROOTFS/bin/$applet"
done
echo "root:x:0:0:root:/:/bin/sh" >"$ROOTFS/etc/passwd"
echo "root:x:0:" >"$ROOTFS/etc/group"
install -m 0755 "$HERE/entrypoint.sh" "$ROOTFS/entrypoint.sh"
install -m 0755 "$HERE/allocate" "$ROOTFS/usr/local/bin/allocate"

tar -C "$ROOTFS" --numeric-owner --owner=0 --group=0 -c . |
  docker import \
    --change 'ENV PATH=/usr/local/bin:/bin' \
    --change 'ENTRYPOINT ["/entrypoint.sh"]' \
    --change 'EXPOSE 18789' \
    --change "LABEL fleet.test_image_digest=$SOURCES_DIGEST" \
    --message 'Fleet test runtime: busybox httpd serving /health' \
    - "$IMAGE" >/dev/null
echo "build.sh: built $IMAGE" >&2
