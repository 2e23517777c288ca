"""Fleet settings: one module, read from the environment (django-environ).

Defaults are production-safe (DEBUG false, /metrics closed); `make run` sets DEBUG=true for
development. Without DEBUG, Fleet refuses to start where no safe default exists (SECRET_KEY,
FLEET_ENCRYPTION_KEYS); the test suite (FLEET_TESTING, set by tests/settings.py) gets
generated development secrets like DEBUG does. Any variable may
also be given as NAME_FILE pointing at a mounted secret file.
Each setting is listed with its default in docs/configuration.md.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import secrets
from datetime import timedelta

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from fleet.paths import BASE_DIR, var_dir

VAR_DIR = var_dir()

env = environ.FileAwareEnv()

DEBUG = env.bool("DEBUG", default=False)
TESTING = env.bool("FLEET_TESTING", default=False)
_DEV_SECRETS = DEBUG or TESTING  # generated under var/ only for development and the test suite


def _dev_secret(filename: str, generate) -> str:
    """A development secret kept under var/, created on first use. Processes starting at once
    (the test workers, `make run`'s) all read the first one written: it is written aside and
    linked into place, which fails when another process linked its own first."""
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    path = VAR_DIR / filename
    if not path.exists():
        draft = VAR_DIR / f".{filename}.{os.getpid()}"
        draft.write_text(generate())
        draft.chmod(0o600)
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


SECRET_KEY = env.str("SECRET_KEY", default="")
FLEET_ENCRYPTION_KEYS = env.str("FLEET_ENCRYPTION_KEYS", default="")
if not SECRET_KEY:
    if not _DEV_SECRETS:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is false.")
    SECRET_KEY = _dev_secret("secret_key", lambda: secrets.token_urlsafe(50))
if not FLEET_ENCRYPTION_KEYS:
    if not _DEV_SECRETS:
        raise ImproperlyConfigured("FLEET_ENCRYPTION_KEYS must be set when DEBUG is false.")
    FLEET_ENCRYPTION_KEYS = _dev_secret(
        "encryption_keys",
        lambda: "dev1:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
    )

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["*"] if DEBUG else ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
CSRF_FAILURE_VIEW = "fleet.views.csrf_failure"  # the JSON error body under /api

INSTALLED_APPS = [
    "unfold",  # the console's theme; before django.contrib.admin, whose templates it replaces
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "social_django",
    "fleet",
    "audit",  # right above fleet: every app below the console records into it
    "accounts",
    "workspaces",
    "llm",  # below agents, which use it through selectors
    "agents",
    "agents.targets",
    "alerts",
    "channels",
    "integrations",
    "sandbox",
    "model_gateway",
    "backups",
    "console",
]

MIDDLEWARE = [
    "fleet.metrics.PrometheusMiddleware",  # first, so it times and counts every response
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "fleet.api.gzip.GZipMiddleware",  # Django's, at a cheaper compression level
    "fleet.api.middleware.ApiErrorMiddleware",
    "fleet.api.middleware.ProxyHeaderWarningMiddleware",  # NUM_PROXIES=0 behind a proxy (README)
    # Sessions, CSRF, authentication and messages: Django's, skipped by /api requests, which use
    # none of them (fleet.api.console_middleware).
    "fleet.api.console_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "fleet.api.console_middleware.CsrfViewMiddleware",
    "fleet.api.console_middleware.AuthenticationMiddleware",
    "fleet.actors.ActorMiddleware",  # after authentication: events a request emits name its user
    "fleet.api.console_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, inside the messages: each console POST beyond add/change/delete is one transaction with its
    # audit row (docs/audit.md).
    "audit.console_requests.ConsoleWriteMiddleware",
]

ROOT_URLCONF = "fleet.urls"
WSGI_APPLICATION = "fleet.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'fleet.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL + immediate transactions: web, worker and beat share one file without "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and broker -----------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="fleet"),
        }
    }
else:
    # A file cache is shared by every process of `make run` (throttles, locks, heartbeats).
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# The filesystem transport ignores the host; naming one spares kombu's warning at every connection.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or REDIS_URL or "filesystem://localhost/"
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {"visibility_timeout": 3600}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
# Four queues, each served by a worker process type of its own (Procfile), so a burst of
# deploys never delays a sampler tick, a sweep or an alert delivery (docs/reliability.md): `provision`
# (deploys and their readiness looks), `periodic` (beat's jobs: setup_periodic_tasks routes
# them), `delivery` (alerts, channel replies) and `runtime`, the default (calls into agents'
# runtimes). A worker started without -Q serves all four; `celery` is the queue of earlier
# releases, drained by the runtime worker.
CELERY_TASK_DEFAULT_QUEUE = "runtime"
FLEET_QUEUES = ("provision", "runtime", "periodic", "delivery")
PERIODIC_QUEUE = "periodic"
CELERY_TASK_QUEUES = tuple(Queue(name) for name in FLEET_QUEUES)
CELERY_TASK_ROUTES = {
    "agents.tasks.provision_agent": {"queue": "provision"},
    "agents.tasks.await_agent_ready": {"queue": "provision"},
    "alerts.deliver*": {"queue": "delivery"},
    "alerts.dispatch_deliveries": {"queue": "delivery"},
    "channels.send_reply": {"queue": "delivery"},
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_BEAT_SCHEDULER = "fleet.beat:DatabaseScheduler"  # django-celery-beat's, writing each send first
# Beat writes a job's last_run_at at every send (its default: every 3 minutes), so
# checks.scheduler of /api/health (fleet.scheduler) reads when each job was last sent.
CELERY_BEAT_SYNC_EVERY = env.int("CELERY_BEAT_SYNC_EVERY", default=1)
CELERY_TIMEZONE = "UTC"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Auth -----------------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]
AUTH_PASSWORD_VALIDATORS: list = []  # the API enforces 8 to 128 characters itself
SESSION_JWT_LIFETIME = timedelta(days=7)
SESSION_COOKIE_NAME_API = "service_auth"
SESSION_COOKIE_SECURE_API = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
SESSION_COOKIE_SECURE = SESSION_COOKIE_SECURE_API
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE_API

# Credential verifiers: fleet/api parses credentials, the owning apps verify them.
FLEET_SESSION_TOKEN_VERIFIER = "accounts.tokens.principal_from_session_token"
FLEET_API_KEY_VERIFIER = "workspaces.keys.principal_from_api_key"
# What a ticket or a cookie names on a caller's behalf, read back and checked again (fleet.edge.websocket).
FLEET_PRINCIPAL_READER = "workspaces.principals.principal_from_ref"

PLATFORM_MODE = env.str("PLATFORM_MODE", default="selfhosted")
if PLATFORM_MODE not in ("selfhosted", "paas"):
    raise ImproperlyConfigured("PLATFORM_MODE must be 'selfhosted' or 'paas'.")
SIGNUP_ENABLED = env.bool("SIGNUP_ENABLED", default=True)
SIGNUP_BOT_PROTECTION_PROVIDER = env.str("SIGNUP_BOT_PROTECTION_PROVIDER", default="none")
TURNSTILE_SITE_KEY = env.str("TURNSTILE_SITE_KEY", default="")
TURNSTILE_SECRET_KEY = env.str("TURNSTILE_SECRET_KEY", default="")
TURNSTILE_VERIFY_URL = env.str(
    "TURNSTILE_VERIFY_URL", default="https://challenges.cloudflare.com/turnstile/v0/siteverify"
)
RECAPTCHA_SITE_KEY = env.str("RECAPTCHA_SITE_KEY", default="")
RECAPTCHA_SECRET_KEY = env.str("RECAPTCHA_SECRET_KEY", default="")
RECAPTCHA_VERIFY_URL = env.str(
    "RECAPTCHA_VERIFY_URL", default="https://www.google.com/recaptcha/api/siteverify"
)
OAUTH_LOGIN_ENABLED = env.bool("OAUTH_LOGIN_ENABLED", default=False)
GITHUB_API_URL = env.str("GITHUB_API_URL", default="https://api.github.com/")
GOOGLE_USERINFO_URL = env.str(
    "GOOGLE_USERINFO_URL", default="https://www.googleapis.com/oauth2/v3/userinfo"
)
GOOGLE_TOKENINFO_URL = env.str(
    "GOOGLE_TOKENINFO_URL", default="https://oauth2.googleapis.com/tokeninfo"
)
SOCIAL_AUTH_GITHUB_KEY = env.str("SOCIAL_AUTH_GITHUB_KEY", default="")
SOCIAL_AUTH_GITHUB_SECRET = env.str("SOCIAL_AUTH_GITHUB_SECRET", default="")
SOCIAL_AUTH_GOOGLE_OAUTH2_KEY = env.str("SOCIAL_AUTH_GOOGLE_OAUTH2_KEY", default="")
SOCIAL_AUTH_GOOGLE_OAUTH2_SECRET = env.str("SOCIAL_AUTH_GOOGLE_OAUTH2_SECRET", default="")
SOCIAL_AUTH_JSONFIELD_ENABLED = True
SOCIAL_AUTH_USER_MODEL = AUTH_USER_MODEL

# --- Product settings -----------------------------------------------------------------
ENABLED_SANDBOX_PROFILES = env.list("ENABLED_SANDBOX_PROFILES", default=["standard"])
NVIDIA_API_KEY = env.str("NVIDIA_API_KEY", default="")
# The nemoclaw sandbox's model endpoint (OpenAI-compatible); tests point it at a loopback fake.
NVIDIA_BASE_URL = env.str("NVIDIA_BASE_URL", default="https://integrate.api.nvidia.com/v1")
# Applying a sandbox's policy at start: retries while the runtime comes up (backoff doubles, max 60 s).
SANDBOX_APPLY_MAX_RETRIES = env.int("SANDBOX_APPLY_MAX_RETRIES", default=8)
SANDBOX_APPLY_RETRY_BACKOFF_SECONDS = env.float("SANDBOX_APPLY_RETRY_BACKOFF_SECONDS", default=2)
NEXTAUTH_URL = env.str("NEXTAUTH_URL", default="")
NORA_PUBLIC_URL = env.str("NORA_PUBLIC_URL", default="")
# The port the web process serves on. Not read from PORT: honcho gives every process of
# `make run` its own PORT (web 8000, worker 8100, ...), and the worker builds the workloads.
FLEET_PORT = env.int("FLEET_PORT", default=8000)
# The address(es) the web process binds (the Procfile passes it to granian, fleet/gunicorn_conf.py
# to gunicorn; fleet/web.py sets it from --host). Read here only to warn when bridged agents
# could not reach the default FLEET_INTERNAL_URL (agents.services.workload.internal_url_warning).
BIND_ADDRESS = env.str("BIND_ADDRESS", default="127.0.0.1")
# How workloads reach Fleet (their usage reports). Empty: derived per network mode from
# FLEET_PORT (agents.services.workload.fleet_internal_url, docs/configuration.md).
FLEET_INTERNAL_URL = env.str("FLEET_INTERNAL_URL", default="")
DEFAULT_RUNTIME_FAMILY = env.str("DEFAULT_RUNTIME_FAMILY", default="openclaw")
DEFAULT_DEPLOY_TARGET = env.str("DEFAULT_DEPLOY_TARGET", default="docker")
DEFAULT_VCPU = env.float("DEFAULT_VCPU", default=1)
# The contract's fallback; OpenClaw needs 2048 (docs/configuration.md), which `make run` sets.
DEFAULT_RAM_MB = env.int("DEFAULT_RAM_MB", default=1024)
DEFAULT_DISK_GB = env.int("DEFAULT_DISK_GB", default=10)
MAX_VCPU = env.float("MAX_VCPU", default=16)
MAX_RAM_MB = env.int("MAX_RAM_MB", default=65536)
MAX_DISK_GB = env.int("MAX_DISK_GB", default=1024)
MAX_AGENTS_PER_USER = env.int("MAX_AGENTS_PER_USER", default=0)  # 0: unlimited (self-hosted)
PAAS_PLAN_LIMITS = env.dict("PAAS_PLAN_LIMITS", cast={"value": int}, default={"free": 3, "pro": 10, "enterprise": 100})
# The images `manage.py build_runtime_images` builds (agents/images); no registry is needed.
AGENT_IMAGE_OPENCLAW = env.str("AGENT_IMAGE_OPENCLAW", default="fleet/openclaw:2026.9.6")
AGENT_IMAGE_HERMES = env.str("AGENT_IMAGE_HERMES", default="fleet/hermes:0.19.0")
DOCKER_HOST = env.str("DOCKER_HOST", default="unix:///var/run/docker.sock")
DOCKER_NETWORK_MODE = env.str("DOCKER_NETWORK_MODE", default="bridge")
DOCKER_HOST_PORT_RANGE = (19000, 19999)
# Agent container hardening (agents.backends.docker.hardening_options): every capability is
# dropped but these, no-new-privileges, a process bound, a read-only root with a tmpfs /tmp.
DOCKER_CAP_ADD = env.list("DOCKER_CAP_ADD", default=[])
DOCKER_PIDS_LIMIT = env.int("DOCKER_PIDS_LIMIT", default=1024)
DOCKER_READ_ONLY_ROOTFS = env.bool("DOCKER_READ_ONLY_ROOTFS", default=True)
DOCKER_TMPFS_MB = env.int("DOCKER_TMPFS_MB", default=256)
# Where bridge mode publishes gateway ports; empty: 127.0.0.1 for a local engine, else all.
DOCKER_PUBLISH_ADDRESS = env.str("DOCKER_PUBLISH_ADDRESS", default="")
# Extra labels on every container Fleet creates, e.g. to tell control planes sharing an engine apart.
DOCKER_CONTAINER_LABELS = env.dict("DOCKER_CONTAINER_LABELS", default={})
# Remote Docker hosts (agents.backends.remote_docker): the network mode of their agents and the
# address their gateway ports are published on (the control plane reaches them over the network).
REMOTE_DOCKER_NETWORK_MODE = env.str("REMOTE_DOCKER_NETWORK_MODE", default="bridge")
REMOTE_DOCKER_PUBLISH_ADDRESS = env.str("REMOTE_DOCKER_PUBLISH_ADDRESS", default="0.0.0.0")
# Who may register personal Remote Docker hosts ("all" signed-in users, the contract's feature;
# "admins": platform admins only), and the networks every address of a host (and of its agents'
# gateways) must lie in, on top of the outbound rule (docs/configuration.md).
REMOTE_HOSTS_ENABLED_FOR = env.str("REMOTE_HOSTS_ENABLED_FOR", default="all")
if REMOTE_HOSTS_ENABLED_FOR not in ("all", "admins"):
    raise ImproperlyConfigured("REMOTE_HOSTS_ENABLED_FOR must be 'all' or 'admins'.")
REMOTE_HOST_ALLOWED_NETWORKS = env.list("REMOTE_HOST_ALLOWED_NETWORKS", default=["0.0.0.0/0", "::/0"])
try:
    [ipaddress.ip_network(_network.strip(), strict=False) for _network in REMOTE_HOST_ALLOWED_NETWORKS]
except ValueError as _exc:
    raise ImproperlyConfigured(f"REMOTE_HOST_ALLOWED_NETWORKS: {_exc} (CIDRs, e.g. 10.0.0.0/8,fd00::/8).") from None
# Provisioning: how long a new workload may take to answer its health check, and how often a
# transient engine error is retried (backoff doubles from the base, at most 120 s).
AGENT_READY_TIMEOUT_SECONDS = env.float("AGENT_READY_TIMEOUT_SECONDS", default=120)
# Deploys of one deploy target (an engine, a host, a cluster) `deploying` at once; the others wait
# `queued` for a start to end (agents.services.provisioning). 0: no bound.
AGENT_STARTS_PER_TARGET = env.int("AGENT_STARTS_PER_TARGET", default=8)
# Kubernetes clusters (agents.targets, agents.backends.kubernetes): how long a redeploy waits for
# the previous Deployment, Service and ConfigMap to be deleted before creating their replacement.
K8S_DELETE_TIMEOUT_SECONDS = env.float("K8S_DELETE_TIMEOUT_SECONDS", default=60)
# Proxmox VE (experimental; agents.backends.proxmox): the API, an API token ("user@realm!name"
# and its secret), the node and storage agents' LXC containers go to, the template they are
# created from (one volume, or per runtime "openclaw=<volume>,hermes=<volume>"), their network
# device, and TLS verification ("true", "false", or the path of a CA bundle).
PROXMOX_URL = env.str("PROXMOX_URL", default="")
PROXMOX_TOKEN_ID = env.str("PROXMOX_TOKEN_ID", default="")
PROXMOX_TOKEN_SECRET = env.str("PROXMOX_TOKEN_SECRET", default="")
PROXMOX_NODE = env.str("PROXMOX_NODE", default="pve")
PROXMOX_TEMPLATE = env.str("PROXMOX_TEMPLATE", default="")
PROXMOX_STORAGE = env.str("PROXMOX_STORAGE", default="local-lvm")
PROXMOX_NETWORK = env.str("PROXMOX_NETWORK", default="name=eth0,bridge=vmbr0,ip=dhcp")
PROXMOX_VERIFY_TLS = env.str("PROXMOX_VERIFY_TLS", default="true")
PROXMOX_TASK_TIMEOUT_SECONDS = env.float("PROXMOX_TASK_TIMEOUT_SECONDS", default=300)
AGENT_PROVISION_MAX_RETRIES = env.int("AGENT_PROVISION_MAX_RETRIES", default=5)
AGENT_PROVISION_RETRY_BACKOFF_SECONDS = env.float("AGENT_PROVISION_RETRY_BACKOFF_SECONDS", default=5)
# The reconciler (agents.services.reconcile, a beat job every minute) takes over a
# deploy whose job was lost: `queued` past AGENT_QUEUED_DEADLINE_SECONDS, `deploying` with no news
# from its job for AGENT_PROVISION_DEADLINE_SECONDS (at least AGENT_READY_TIMEOUT_SECONDS +
# AGENT_PROVISION_DEADLINE_MARGIN_SECONDS);
# after AGENT_RECONCILE_MAX_TAKEOVERS takeovers the deploy ends in `error`.
AGENT_QUEUED_DEADLINE_SECONDS = env.float("AGENT_QUEUED_DEADLINE_SECONDS", default=300)
AGENT_PROVISION_DEADLINE_SECONDS = env.float("AGENT_PROVISION_DEADLINE_SECONDS", default=600)
AGENT_PROVISION_DEADLINE_MARGIN_SECONDS = env.float("AGENT_PROVISION_DEADLINE_MARGIN_SECONDS", default=300)
AGENT_RECONCILE_MAX_TAKEOVERS = env.int("AGENT_RECONCILE_MAX_TAKEOVERS", default=3)
# An adopted runtime's first handshake (agents.handshake.first, published at adoption): tries
# again this many times while the runtime cannot be reached (1, 2, 4... s, at most 30 s apart).
ADOPTED_HANDSHAKE_RETRIES = env.int("ADOPTED_HANDSHAKE_RETRIES", default=8)
# How long POST /api/agents/deploy remembers an Idempotency-Key (agents.services.idempotency).
IDEMPOTENCY_KEY_TTL_HOURS = env.int("IDEMPOTENCY_KEY_TTL_HOURS", default=24)
# A usage event dated further back than this counts as received now (agents.usage.services).
USAGE_MAX_AGE_DAYS = env.int("USAGE_MAX_AGE_DAYS", default=35)
# Agent files, export and migration (agents.files): the largest file read or written through
# the API, the largest bundle uploaded, its state's largest unpacked size, and where drafts wait.
AGENT_FILE_MAX_BYTES = env.int("AGENT_FILE_MAX_BYTES", default=5 * 1024 * 1024)
# An export asks the engine again when its archive of the state was cut short (a running
# runtime rewrote a file while it was read), at most this many times in all.
AGENT_EXPORT_ATTEMPTS = env.int("AGENT_EXPORT_ATTEMPTS", default=3)
# Logs (agents.logs): a followed log (server-sent events, on the event loop) ends after this long
# and the browser reconnects where it left off; a heartbeat comment when quiet.
LOGS_FOLLOW_SECONDS = env.float("LOGS_FOLLOW_SECONDS", default=1800)
LOGS_HEARTBEAT_SECONDS = env.float("LOGS_HEARTBEAT_SECONDS", default=15)
# Live streams (fleet.edge.streams): what one user may hold at once across every web process
# (followed logs and chat turns; terminals), and what one web process holds in all.
STREAM_LIMIT_PER_USER = env.int("STREAM_LIMIT_PER_USER", default=4)
TERMINAL_LIMIT_PER_USER = env.int("TERMINAL_LIMIT_PER_USER", default=3)
STREAM_LIMIT_TOTAL = env.int("STREAM_LIMIT_TOTAL", default=2000)
# Terminals (agents.terminal): one with neither input nor output for this long is closed; the
# caller's session and access are checked again (and the session's record vouched for) this often.
TERMINAL_IDLE_SECONDS = env.float("TERMINAL_IDLE_SECONDS", default=900)
TERMINAL_RECHECK_SECONDS = env.float("TERMINAL_RECHECK_SECONDS", default=60)
MIGRATION_BUNDLE_MAX_BYTES = env.int("MIGRATION_BUNDLE_MAX_BYTES", default=200 * 1024 * 1024)
MIGRATION_STATE_MAX_BYTES = env.int("MIGRATION_STATE_MAX_BYTES", default=2 * 1024 * 1024 * 1024)
MIGRATION_DRAFTS_DIR = env.str("MIGRATION_DRAFTS_DIR", default=str(BASE_DIR / "var" / "migration-drafts"))
MIGRATION_DRAFT_TTL_HOURS = env.float("MIGRATION_DRAFT_TTL_HOURS", default=24)
# Bounds on an uploaded bundle's walk (agents.files.bundle_walk): an extended tar header
# (PAX, GNU long name) Fleet writes is a path of a few KB; an export's state holds thousands of
# files, not hundreds of thousands; gzip of real state rarely passes 100:1 (zeros reach 1000:1).
MIGRATION_BUNDLE_MAX_HEADER_BYTES = env.int("MIGRATION_BUNDLE_MAX_HEADER_BYTES", default=64 * 1024)
MIGRATION_BUNDLE_MAX_ENTRIES = env.int("MIGRATION_BUNDLE_MAX_ENTRIES", default=20_000)
MIGRATION_BUNDLE_MAX_RATIO = env.float("MIGRATION_BUNDLE_MAX_RATIO", default=100)
MIGRATION_BUNDLE_RATIO_AFTER_BYTES = env.int("MIGRATION_BUNDLE_RATIO_AFTER_BYTES", default=16 * 1024 * 1024)
# Per user: uploads (each is a walk of up to 200 MB) and the drafts kept on disk for the TTL.
MIGRATION_UPLOAD_RATE_PER_USER = env.str("MIGRATION_UPLOAD_RATE_PER_USER", default="10/1h")
MIGRATION_DRAFTS_MAX_PER_USER = env.int("MIGRATION_DRAFTS_MAX_PER_USER", default=5)
MIGRATION_DRAFTS_MAX_BYTES_PER_USER = env.int("MIGRATION_DRAFTS_MAX_BYTES_PER_USER", default=1024 * 1024 * 1024)
# Backups (backups app): where agents' bundles go unless a policy names its own S3 storage,
# `file:///folder` or `s3://ACCESS:SECRET@host:port/bucket/prefix` (`?region=`, `?https=false`);
# a failed attempt is tried again this many times, the wait doubling from the first.
BACKUP_STORAGE_URL = env.str("BACKUP_STORAGE_URL", default=f"file://{VAR_DIR / 'backups'}")
BACKUP_RETRIES = env.int("BACKUP_RETRIES", default=3)
BACKUP_RETRY_DELAY_SECONDS = env.float("BACKUP_RETRY_DELAY_SECONDS", default=60)
# A backup still `running` this long after it was asked for has lost its job: it becomes failed.
BACKUP_LOST_AFTER_SECONDS = env.int("BACKUP_LOST_AFTER_SECONDS", default=6 * 3600)
OUTBOUND_ALLOWED_HOSTS = env.list("OUTBOUND_ALLOWED_HOSTS", default=[])
# Integrations: provider endpoints overriding the catalog's, JSON
# {"<provider>": {"api": URL, "authorize": URL, "token": URL}} (loopback fakes, private gateways),
# and how long an OAuth authorization may take between start and callback.
INTEGRATION_ENDPOINTS = env.json("INTEGRATION_ENDPOINTS", default={})
# Model provider base URLs overriding the catalog's: {"<provider>": "<base URL>"} (llm.providers).
LLM_PROVIDER_ENDPOINTS = env.json("LLM_PROVIDER_ENDPOINTS", default={})
# The model of agents deployed without one: the id of a saved provider key (llm) and a model
# name of its provider; both empty: such agents get no model from Fleet.
DEFAULT_LLM_KEY = env.str("DEFAULT_LLM_KEY", default="")
DEFAULT_LLM_MODEL = env.str("DEFAULT_LLM_MODEL", default="")
# Where a new agent's runtime sends its model calls when its deploy does not say (`modelRouting`):
# `direct` (to the provider, the key in the container) or `gateway` (Fleet's /llm/v1, the key in
# Fleet, every token metered, hard caps refusing a call before it is made: model_gateway).
DEFAULT_MODEL_ROUTING = env.str("DEFAULT_MODEL_ROUTING", default="direct")
# The model gateway: the output reserved against budgets when a request names no max_tokens
# (and then set on it, so the reservation bounds the spend), how long the provider may take to
# answer and to finish, the largest request body, and how long an unsettled reservation counts.
MODEL_GATEWAY_DEFAULT_MAX_TOKENS = env.int("MODEL_GATEWAY_DEFAULT_MAX_TOKENS", default=8192)
MODEL_GATEWAY_CONNECT_TIMEOUT_SECONDS = env.float("MODEL_GATEWAY_CONNECT_TIMEOUT_SECONDS", default=10)
MODEL_GATEWAY_TIMEOUT_SECONDS = env.float("MODEL_GATEWAY_TIMEOUT_SECONDS", default=600)
MODEL_GATEWAY_MAX_BODY_BYTES = env.int("MODEL_GATEWAY_MAX_BODY_BYTES", default=20 * 1024 * 1024)
MODEL_GATEWAY_RESERVATION_SECONDS = env.int("MODEL_GATEWAY_RESERVATION_SECONDS", default=900)
# A web process's allowance for an agent with budgets (model_gateway/allowances.py): room for up
# to this many calls' worst case reserved at once, its calls admitted against it in memory (0: every
# call reserved on its own), for at most this many seconds before another is granted, given back
# once unused for this long.
MODEL_GATEWAY_ALLOWANCE_CALLS = env.int("MODEL_GATEWAY_ALLOWANCE_CALLS", default=128)
MODEL_GATEWAY_ALLOWANCE_SECONDS = env.float("MODEL_GATEWAY_ALLOWANCE_SECONDS", default=10)
MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS = env.float("MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS", default=1)
# How long a web process prices the gateway's reservations with the rate book it last read.
MODEL_GATEWAY_RATE_BOOK_SECONDS = env.float("MODEL_GATEWAY_RATE_BOOK_SECONDS", default=5)
OAUTH_STATE_TTL_SECONDS = env.int("OAUTH_STATE_TTL_SECONDS", default=600)
OUTBOUND_TIMEOUT_SECONDS = env.float("OUTBOUND_TIMEOUT_SECONDS", default=10)
GATEWAY_ALLOWED_PORTS = env.str("GATEWAY_ALLOWED_PORTS", default="18789,9119,19000-19999,30000-32767")
# The gateway listener (`manage.py gateway_listener`): GATEWAY_LISTENER_SHARDS processes split the
# agents by a stable hash of their id, each told its GATEWAY_LISTENER_SHARD (0-based); each reads
# which agents it holds every GATEWAY_LISTENER_REFRESH_SECONDS. Validated by agents.gateway.listener.
GATEWAY_LISTENER_SHARDS = env.int("GATEWAY_LISTENER_SHARDS", default=1)
GATEWAY_LISTENER_SHARD = env.int("GATEWAY_LISTENER_SHARD", default=0)
GATEWAY_LISTENER_REFRESH_SECONDS = env.float("GATEWAY_LISTENER_REFRESH_SECONDS", default=15)
# Channels (channels app): the provider APIs legacy adapters call (tests point them at loopback),
# the inbound webhook limits, and how long a channel call to a runtime may take (OpenClaw stops a
# channel in up to ~10 s when it cannot reach its provider).
TELEGRAM_API_BASE_URL = env.str("TELEGRAM_API_BASE_URL", default="https://api.telegram.org")
SLACK_API_BASE_URL = env.str("SLACK_API_BASE_URL", default="https://slack.com/api")
DISCORD_API_BASE_URL = env.str("DISCORD_API_BASE_URL", default="https://discord.com/api/v10")
CHANNELS_WEBHOOK_RATE = env.str("CHANNELS_WEBHOOK_RATE", default="120/1m")
CHANNELS_WEBHOOK_MAX_BYTES = env.int("CHANNELS_WEBHOOK_MAX_BYTES", default=256 * 1024)
CHANNELS_GATEWAY_TIMEOUT_SECONDS = env.float("CHANNELS_GATEWAY_TIMEOUT_SECONDS", default=30)
CHANNELS_FORWARD_MAX_RETRIES = env.int("CHANNELS_FORWARD_MAX_RETRIES", default=20)
CHANNELS_FORWARD_RETRY_SECONDS = env.float("CHANNELS_FORWARD_RETRY_SECONDS", default=15)
# A forwarded message's chat turn gives up after the first; a claim older than both together is
# a dead worker's, and a redelivered task or the sweep takes the message over.
CHANNELS_TURN_TIMEOUT_SECONDS = env.float("CHANNELS_TURN_TIMEOUT_SECONDS", default=120)
CHANNELS_CLAIM_MARGIN_SECONDS = env.float("CHANNELS_CLAIM_MARGIN_SECONDS", default=60)
CHANNELS_CLI_LOGIN_TIMEOUT_SECONDS = env.float("CHANNELS_CLI_LOGIN_TIMEOUT_SECONDS", default=60)
# OpenClaw channel plugins the agent image carries beside OpenClaw (type=path in the image),
# linked through `plugins.load.paths` when such a channel is saved.
OPENCLAW_CHANNEL_PLUGIN_PATHS = env.dict(
    "OPENCLAW_CHANNEL_PLUGIN_PATHS",
    default={name: f"/opt/openclaw/node_modules/@openclaw/{name}" for name in ("whatsapp", "feishu", "zalouser")},
)
# The gateway proxy (agents.proxy): each agent's UI on its own origin, `<agent-id>.<domain>`
# (with the port browsers use); empty: gw.localhost:<FLEET_PORT> (browsers resolve *.localhost to
# loopback; production uses a wildcard name, TLS and this setting). How long a browser stays
# signed into an agent's UI, how many of its WebSockets one user may hold, and how often a held
# one checks its holder may still operate the agent.
GATEWAY_PROXY_DOMAIN = env.str("GATEWAY_PROXY_DOMAIN", default="")
GATEWAY_PROXY_COOKIE_HOURS = env.float("GATEWAY_PROXY_COOKIE_HOURS", default=8)
GATEWAY_PROXY_SOCKETS_PER_USER = env.int("GATEWAY_PROXY_SOCKETS_PER_USER", default=16)
GATEWAY_PROXY_RECHECK_SECONDS = env.float("GATEWAY_PROXY_RECHECK_SECONDS", default=60)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")  # when set, /metrics needs "Authorization: Bearer <token>"
# Without a token /metrics answers 404 unless this is true (the default under DEBUG only).
METRICS_PUBLIC = env.bool("METRICS_PUBLIC", default=DEBUG)

# Rate limits beyond the contract's (security review): "<count>/<n><s|m|h|d>".
# Where a sign-in without `next` lands (Django's default, /accounts/profile/, does not exist).
LOGIN_URL = "/admin/login/"
LOGIN_REDIRECT_URL = "/admin/"
ADMIN_LOGIN_RATE_PER_IP = env.str("ADMIN_LOGIN_RATE_PER_IP", default="20/15m")
ADMIN_LOGIN_RATE_PER_ACCOUNT = env.str("ADMIN_LOGIN_RATE_PER_ACCOUNT", default="10/15m")
MEMBER_ADD_RATE_PER_USER = env.str("MEMBER_ADD_RATE_PER_USER", default="30/1h")
MEMBER_ADD_RATE_PER_WORKSPACE = env.str("MEMBER_ADD_RATE_PER_WORKSPACE", default="60/1h")
# How long an invitation to a workspace (what adding a member makes) waits to be accepted.
WORKSPACE_INVITATION_DAYS = env.int("WORKSPACE_INVITATION_DAYS", default=7)
ALERT_TEST_RATE_PER_RULE = env.str("ALERT_TEST_RATE_PER_RULE", default="5/10m")
ALERT_TEST_RATE_PER_USER = env.str("ALERT_TEST_RATE_PER_USER", default="30/1h")
DEPLOY_RATE_PER_USER = env.str("DEPLOY_RATE_PER_USER", default="30/1m")
USAGE_REPORT_RATE_PER_AGENT = env.str("USAGE_REPORT_RATE_PER_AGENT", default="300/1m")
# Remote Docker hosts: connection tests, and registrations or changes of how a host is reached
# (address, user, credentials), per acting user and per target address (host:port, whoever's row).
REMOTE_HOST_TEST_RATE_PER_USER = env.str("REMOTE_HOST_TEST_RATE_PER_USER", default="20/1h")
REMOTE_HOST_TEST_RATE_PER_ADDRESS = env.str("REMOTE_HOST_TEST_RATE_PER_ADDRESS", default="5/15m")
REMOTE_HOST_CHANGE_RATE_PER_USER = env.str("REMOTE_HOST_CHANGE_RATE_PER_USER", default="20/1h")
REMOTE_HOST_CHANGE_RATE_PER_ADDRESS = env.str("REMOTE_HOST_CHANGE_RATE_PER_ADDRESS", default="10/1h")
ALERT_TEST_RECIPIENTS_PER_HOUR = env.int("ALERT_TEST_RECIPIENTS_PER_HOUR", default=100)
# Alert deliveries (alerts.services.delivery): the wait before each retry after a failed attempt,
# in seconds; one attempt more than there are steps. The fault tests shorten them.
ALERT_RETRY_DELAYS_SECONDS = env.list("ALERT_RETRY_DELAYS_SECONDS", cast=float, default=[10, 60, 300, 1800, 7200])

# The audit log (docs/audit.md): rows older than this many days leave, hourly (audit.purge).
AUDIT_RETENTION_DAYS = env.int("AUDIT_RETENTION_DAYS", default=365)

# --- Email ----------------------------------------------------------------------------
_email = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(_email)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="fleet@localhost")

# --- REST framework -------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["fleet.api.authentication.FleetAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["fleet.api.permissions.DenyAll"],  # every view declares its access
    "DEFAULT_RENDERER_CLASSES": ["fleet.api.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["fleet.api.parsers.SafeJSONParser"],  # the one input layer (defect 9)
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "fleet.api.negotiation.JsonFirstNegotiation",
    "EXCEPTION_HANDLER": "fleet.api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "fleet.api.schema.FleetAutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_PAGINATION_CLASS": None,
    # Proxies in front of the app whose X-Forwarded-For is trusted; 0 ignores the header, so a
    # client cannot dodge per-IP rate limits by inventing addresses. Behind one proxy, set 1.
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Fleet API",
    "DESCRIPTION": "Control plane for fleets of AI agent runtimes.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api",
    # Choice sets shared by field name across apps get one stable component name each.
    "ENUM_NAME_OVERRIDES": {
        "HealthStatusEnum": ["ok", "degraded"],
        "UserRoleEnum": ["user", "admin"],
        "WorkspaceRoleEnum": ["viewer", "editor", "admin", "owner"],
        "GrantableWorkspaceRoleEnum": ["viewer", "editor", "admin"],
        "ChannelLoginKindEnum": ["qr", "cli", "none"],
        "AgentStatusEnum": "agents.models.Status",
        "SandboxProfileEnum": "agents.models.SandboxProfile",
    },
}

# --- Static, i18n, logging ------------------------------------------------------------
STATIC_URL = "static/"
# The console (django-unfold): Fleet's name, the fleet dashboard as its home, and the sidebar
# grouped by what operators look after (console.navigation). No asset from a CDN: the theme
# ships its fonts and scripts.
UNFOLD = {
    "SITE_TITLE": "Fleet admin",
    "SITE_HEADER": "Fleet control plane",
    "SITE_SUBHEADER": "Operators' console",
    "SITE_URL": "/",
    "SITE_SYMBOL": "hub",
    "SITE_FAVICONS": [{"rel": "icon", "type": "image/svg+xml", "href": "console.navigation.favicon"}],
    "SHOW_HISTORY": True,
    "SHOW_VIEW_ON_SITE": False,
    "DASHBOARD_CALLBACK": "console.dashboard.dashboard_callback",
    "STYLES": ["console.navigation.stylesheet"],
    "SIDEBAR": {
        "show_search": True,
        "show_all_applications": True,
        "navigation": "console.navigation.sidebar",
    },
}
STATIC_ROOT = BASE_DIR / "staticfiles"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # an avatar is at most 500 KB of base64

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
# Idle is quiet at the default level: the periodic jobs' bookkeeping (beat's "Sending due task",
# the worker's "Task ... received" / "succeeded") shows from LOG_LEVEL=DEBUG only; their failures
# (WARNING and up) always show. Every line is printed once: Django's own console handler (DEBUG
# only) would print request warnings a second time through the root handler.
_QUIET_UNLESS_DEBUG = "DEBUG" if LOG_LEVEL.upper() == "DEBUG" else "WARNING"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "celery.beat": {"level": _QUIET_UNLESS_DEBUG},
        "celery.app.trace": {"level": _QUIET_UNLESS_DEBUG},
        "celery.worker.strategy": {"level": _QUIET_UNLESS_DEBUG},
    },
}

# --- Request path ----------------------------------------------------------
# How long a web process trusts the user row a session token names (accounts.user_cache);
# changes in this host's processes apply at once, elsewhere within this time. 0 turns it off.
USER_CACHE_SECONDS = env.float("USER_CACHE_SECONDS", default=5.0)
# PostgreSQL through fleet.postgresql: CONN_HEALTH_CHECKS's per-request `SELECT 1` only for a
# connection idle longer than this (seconds); 0 checks before every request, as Django does.
DB_HEALTH_CHECK_IDLE_SECONDS = env.float("DB_HEALTH_CHECK_IDLE_SECONDS", default=10.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "fleet.postgresql"
# GET /agents: the last body of each caller kept per web process, up to this many MB
# (agents.list_cache; invalidated by the list version the database bumps). 0 turns it off.
AGENT_LIST_CACHE_MB = env.int("AGENT_LIST_CACHE_MB", default=16)
# GET /agents after a write: each row's JSON kept per caller (and scope) under its agent's list
# revision, up to this many MB per web process (agents.list_rows), so a write re-serializes only
# the rows it changed. 0 builds every list whole.
AGENT_LIST_ROWS_MB = env.int("AGENT_LIST_ROWS_MB", default=32)
