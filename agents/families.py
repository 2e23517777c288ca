"""What each runtime family needs from its workload, in one place per family.

The workload builder and the backends read the variable names from here, the gateway reads the
paths, so a family's knowledge is not spread over the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Where every family's workload keeps its state: the volume Fleet mounts (Docker, Kubernetes)
# and the files API's root. The runtime is told through its own variables (`state_env`), so any
# image of the family works, whatever folder it would use by default: under a read-only root an
# image left to its default wrote to a folder it cannot write (EROFS).
STATE_PATH = "/state"
HOME_PATH = f"{STATE_PATH}/home"  # the runtime user's HOME: tools keep their files there
# Where Fleet's images' entrypoints (agents/images/scripts) make the gateway listen: `lan` (all
# interfaces, the default) or `loopback`.
GATEWAY_BIND_VARIABLE = "FLEET_GATEWAY_BIND"


@dataclass(frozen=True)
class Family:
    name: str
    token_variable: str  # the env variable the runtime reads its gateway secret from
    port_variable: str  # ...and its gateway's listen port from
    health_path: str  # liveness over HTTP, no credentials
    ready_path: str  # readiness over HTTP
    image_setting: str  # the setting naming the image the family's workloads run
    fixed_env: dict[str, str] = field(default_factory=dict)  # what the runtime needs to serve at all
    state_env: dict[str, str] = field(default_factory=dict)  # where it keeps its state: STATE_PATH
    # Removes the path given after it (a file, a link itself, or a folder with its content) with
    # the runtime's own interpreter, which every image of the family has where `rm` may be missing.
    remove_command: tuple[str, ...] = ()
    # What the apps above may ask of the family, so none of them branches on its name:
    manages_channels: bool = False  # channels live in the runtime (else Fleet's own adapters)
    env_file: str = ""  # a state-folder file it re-reads for extra variables ("": set them by config)
    # A state-folder file it re-reads for its configuration, the model's included ("": config.patch).
    config_file: str = ""
    config_mcp_servers: bool = False  # its config can hold MCP servers


OPENCLAW = Family(
    name="openclaw",
    token_variable="OPENCLAW_GATEWAY_TOKEN",
    port_variable="OPENCLAW_GATEWAY_PORT",
    health_path="/health",
    ready_path="/readyz",
    image_setting="AGENT_IMAGE_OPENCLAW",
    state_env={"OPENCLAW_STATE_DIR": STATE_PATH, "OPENCLAW_CONFIG_PATH": f"{STATE_PATH}/openclaw.json",
               "HOME": HOME_PATH},
    remove_command=("node", "-e", "require('fs').rmSync(process.argv[1], {recursive: true})"),
    manages_channels=True,
    config_mcp_servers=True,
)

HERMES = Family(
    name="hermes",
    token_variable="API_SERVER_KEY",
    port_variable="API_SERVER_PORT",
    health_path="/health",
    ready_path="/health/detailed",
    image_setting="AGENT_IMAGE_HERMES",
    fixed_env={"API_SERVER_ENABLED": "true"},  # the API server is off unless asked for
    state_env={"HERMES_HOME": STATE_PATH, "HOME": HOME_PATH},
    remove_command=("python3", "-c", (
        "import os, shutil, sys; p = sys.argv[1]; "
        "shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)")),
    env_file=".env",  # $HERMES_HOME/.env, loaded with override on every turn (measured)
    config_file="config.yaml",  # $HERMES_HOME/config.yaml, re-read when its mtime or size changes
)

FAMILIES = {family.name: family for family in (OPENCLAW, HERMES)}


def family_of(name: str) -> Family:
    """The family called `name`; KeyError for a family Fleet does not run."""
    return FAMILIES[name]
