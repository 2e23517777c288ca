#!/usr/bin/env bash
# Build the real runtime images (fleet/openclaw, fleet/hermes) on the test engine, once per
# machine: `manage.py build_runtime_images` skips a tag already built from the current recipe,
# so a second run is a no-op in seconds. Installs what the build needs if it is missing.
# Progress goes to stderr; stdout carries only the exports for `eval "$(.ci/runtime-images.sh)"`.
# Needs FLEET_TEST_DOCKER_HOST (from .ci/docker-up.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_DIR="${FLEET_RUNTIME_CACHE_DIR:-/var/cache/fleet-runtimes}"  # npm and pip downloads, kept
say() { echo "runtime-images: $*" >&2; }

: "${FLEET_TEST_DOCKER_HOST:?run .ci/docker-up.sh first}"

# npm fetches Node 24 (and a pinned npm) for OpenClaw; Debian's python3.11 is copied into the
# Hermes image. Any npm does: the machine's node is never put in an image.
missing=()
command -v npm >/dev/null 2>&1 || missing+=(npm)
for package in python3.11 python3.11-venv ca-certificates; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

make install >&2
mkdir -p "$CACHE_DIR"
# Two CI runs on one machine build one after the other; the second then skips.
exec 9>"$CACHE_DIR/build.lock"
flock 9
# DEBUG=true: CI has no deployment secrets; the development ones under var/ do.
DEBUG=true .venv/bin/python manage.py build_runtime_images \
  --docker-host "$FLEET_TEST_DOCKER_HOST" --cache-dir "$CACHE_DIR" >&2

# The tags come from the recipes, so this line never goes stale.
.venv/bin/python -c '
from agents.images.catalog import RECIPES
print("export", " ".join(f"FLEET_TEST_{family.upper()}_IMAGE={recipe.tag}" for family, recipe in RECIPES.items()))'
