"""The coordinator's one settings module, read from the environment.

Every setting has a default that works on a laptop; production sets
SECRET_KEY, DEBUG=0, ALLOWED_HOSTS and DATABASE_URL. Misconfiguration is
reported by system checks (see `indexer/checks.py`).
"""

from __future__ import annotations

from pathlib import Path

import environ

from coordinator.local_secrets import local_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
# A checkout (manage.py beside the apps) keeps its data and .env at its root; an
# installed coordinator (`pip install .`, `seed-coordinator`) never writes into
# site-packages: it uses the current directory, or DATA_DIR.
_CHECKOUT = (BASE_DIR / "manage.py").exists()
_HOME = BASE_DIR if _CHECKOUT else Path.cwd()

env = environ.Env()
environ.Env.read_env(_HOME / ".env", overwrite=False)
# Where the coordinator keeps its data: the embedded database (pg/), the secret
# key, the admin password, snapshots, collected static files, metrics files;
# one per host (docs/several-hosts.md).
DATA_DIR = env.path("DATA_DIR", default=_HOME / "var")
VAR_DIR = Path(DATA_DIR)

DEBUG = env.bool("DEBUG", default=False)
# Unset, a random key is made on first start and kept in var/secret-key
# (coordinator/local_secrets.py): there is no public development key.
SECRET_KEY_FILE = None if env.str("SECRET_KEY", default="") else VAR_DIR / "secret-key"
SECRET_KEY = env.str("SECRET_KEY", default="") or local_secret_key(VAR_DIR / "secret-key")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS (docs/security.md, "Deployment") ----------------------------------
# Behind a TLS proxy, name the header it sets (e.g. HTTP_X_FORWARDED_PROTO):
# a request carrying it with "https" counts as secure, so links the
# coordinator builds (the catalog's `next`) are https://. Only set it when
# the proxy always sets or strips that header.
_PROXY_HEADER = env.str("SECURE_PROXY_SSL_HEADER", default="")
SECURE_PROXY_SSL_HEADER = (_PROXY_HEADER, "https") if _PROXY_HEADER else None
# Session and CSRF cookies only over HTTPS.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
# Strict-Transport-Security max-age in seconds (0: no header).
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# Redirect http:// to https:// (not /metrics: scrapes often come over plain
# HTTP from the host itself).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]

INSTALLED_APPS = [
    "console.apps.ConsoleAdminConfig",  # django.contrib.admin with the dashboard
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files served from here, never a CDN
    "indexer",
    "seeding",
    "leases",
    "newznab",
    "console",
]

MIDDLEWARE = [
    # /healthz and /readyz, before the host check and the HTTPS redirect (coordinator/health.py).
    "coordinator.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "indexer.request_log.ApiRequestLogMiddleware",
    "indexer.api.middleware.ApiErrorMiddleware",
    "indexer.api.middleware.QueueWaitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "coordinator.urls"
WSGI_APPLICATION = "coordinator.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Inside the coordinator package, so an installed wheel carries them.
        "DIRS": [BASE_DIR / "templates"],  # top-level templates/, a package in the wheel
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

# --- Database ---------------------------------------------------------------
# DATABASE_URL selects the database. Unset, the embedded PostgreSQL under
# var/pg is started on first connect (indexer/embedded_postgres).
EMBEDDED_DATABASE = not env.str("DATABASE_URL", default="")
if EMBEDDED_DATABASE:
    DATABASES = {
        "default": {
            "ENGINE": "indexer.embedded_postgres",
            "NAME": env.str("EMBEDDED_DATABASE_NAME", default="coordinator"),
            "USER": "postgres",
            "EMBEDDED_DIR": str(env.path("EMBEDDED_DATABASE_DIR", default=VAR_DIR / "pg")),
        }
    }
else:
    DATABASES = {"default": env.db_url("DATABASE_URL")}
    DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DATABASES["default"].setdefault("OPTIONS", {})
# A database that does not answer must not hold a worker: connecting gives up
# after DB_CONNECT_TIMEOUT seconds (then the API answers 503).
DATABASES["default"]["OPTIONS"].setdefault(
    "connect_timeout", env.int("DB_CONNECT_TIMEOUT", default=5)
)
# Server-side binding lets psycopg prepare the hot statements (the claim is
# planned once per connection, not on every call). DB_PREPARE=0 turns it off,
# e.g. behind a pooler in transaction mode that cannot keep prepared statements.
if env.bool("DB_PREPARE", default=True):
    DATABASES["default"]["OPTIONS"].setdefault("server_side_binding", True)
    DATABASES["default"]["OPTIONS"].setdefault("prepare_threshold", 2)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Web server (`manage.py serve`, docs/deploy.md "Workers") ------------------
# gunicorn's gthread workers: each of WEB_WORKERS processes serves WEB_THREADS
# requests at once, so a snapshot or a relayed overview streaming for minutes
# holds one thread, not a process. WEB_TIMEOUT only ends a worker whose main
# loop hangs, never a long request; WEB_GRACEFUL_TIMEOUT is what a stream gets
# to finish on a restart.
BIND = env.str("BIND", default="127.0.0.1:8000")
WEB_WORKERS = env.int("WEB_WORKERS", default=3)
WEB_THREADS = env.int("WEB_THREADS", default=8)
WEB_TIMEOUT = env.int("WEB_TIMEOUT", default=120)
WEB_GRACEFUL_TIMEOUT = env.int("WEB_GRACEFUL_TIMEOUT", default=600)
WEB_KEEPALIVE = env.int("WEB_KEEPALIVE", default=75)
# An API call that waited longer than this for a thread (all busy) answers 503
# with Retry-After instead of running late (indexer/queue_wait.py); the agent's
# HTTP timeout is 60 s. 0: never.
API_QUEUE_MAX_SECONDS = env.float("API_QUEUE_MAX_SECONDS", default=20.0)

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")

# --- Node API ---------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["indexer.api.authentication.NodeTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["indexer.api.permissions.IsNode"],
    "DEFAULT_PARSER_CLASSES": ["indexer.api.parsers.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "indexer.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Seed coordinator node API",
    "DESCRIPTION": "The protocol between seed nodes and the coordinator (see docs/api.md).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # The interactive docs (/api/v1/docs/swagger/) load Swagger UI from the
    # coordinator's own static files: no browser request leaves for a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Largest JSON body a node may send, in bytes (413 beyond).
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=64 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

# --- Leasing ----------------------------------------------------------------
# A lease whose heartbeat is older than this passes to the next node.
LEASE_TTL_SECONDS = env.int("LEASE_TTL_SECONDS", default=15 * 60)
# Leases a range may use up before it is marked failed.
MAX_ATTEMPTS = env.int("MAX_ATTEMPTS", default=5)
# Range priority: a LOWER number is MORE urgent. Ranges planned without a
# priority get the default; anything below it is "urgent".
DEFAULT_PRIORITY = env.int("DEFAULT_PRIORITY", default=100)
# The tail planner plans new articles at this priority (more urgent than history).
TAIL_PRIORITY = env.int("TAIL_PRIORITY", default=10)
# Seconds a node is told to wait when nothing can be handed out.
LEASE_RETRY_AFTER_SECONDS = env.int("LEASE_RETRY_AFTER_SECONDS", default=30)
# Group leases (window indexing). The tail lane works ranges with priority
# <= TAIL_PRIORITY; the history lane works the rest within these bounds and,
# with LEASE_CAPTURE_ONLY, only ranges flagged capture.
LEASE_PRIORITY_MIN = env.int("LEASE_PRIORITY_MIN", default=-(2**31))
LEASE_PRIORITY_MAX = env.int("LEASE_PRIORITY_MAX", default=2**31 - 1)
LEASE_CAPTURE_ONLY = env.bool("LEASE_CAPTURE_ONLY", default=False)
# Where lane snapshots (serialized windows) are kept, and their size limit (413 beyond).
SNAPSHOT_DIR = env.path("SNAPSHOT_DIR", default=VAR_DIR / "snapshots")
SNAPSHOT_MAX_BYTES = env.int("SNAPSHOT_MAX_BYTES", default=8 * 2**30)
# Where snapshots live (docs/several-hosts.md, "Snapshot storage"): "filesystem"
# (SNAPSHOT_DIR, a shared volume with several hosts) or "s3": any S3-compatible
# object store through django-storages (pip install '.[s3]'); nodes then fetch
# snapshots from presigned URLs valid for SNAPSHOT_URL_SECONDS.
SNAPSHOT_STORAGE = env.str("SNAPSHOT_STORAGE", default="filesystem")
SNAPSHOT_URL_SECONDS = env.int("SNAPSHOT_URL_SECONDS", default=600)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "snapshots": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(SNAPSHOT_DIR)},
    },
}
if SNAPSHOT_STORAGE == "s3":
    STORAGES["snapshots"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env.str("SNAPSHOT_S3_BUCKET"),
            "endpoint_url": env.str("SNAPSHOT_S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("SNAPSHOT_S3_REGION", default="") or None,
            "access_key": env.str("SNAPSHOT_S3_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("SNAPSHOT_S3_SECRET_ACCESS_KEY", default="") or None,
            "querystring_auth": True,
            "file_overwrite": True,
            "default_acl": None,
        },
    }
# The fault suite's crash points (indexer/crashpoints.py): never read from the
# environment; only tests/chaos/settings.py turns them on.
CRASH_POINTS = False
# Live leases one node may hold at once: range leases (alone or through a
# lane) and held lanes; beyond, a lease call answers 429 too_many_leases (0: no cap).
LEASE_MAX_PER_NODE = env.int("LEASE_MAX_PER_NODE", default=64)
# Lease calls (ranges/lease, groups/lease) one node may make per minute,
# counted in PostgreSQL across hosts; beyond, 429 throttled with Retry-After (0: no limit).
LEASE_RATE_PER_MINUTE = env.int("LEASE_RATE_PER_MINUTE", default=600)
# Releases marked `uncounted` (the attempt is given back) one range takes;
# later ones count as attempts, so a node cannot keep a range busy forever.
MAX_UNCOUNTED_RELEASES = env.int("MAX_UNCOUNTED_RELEASES", default=3)
# A node's last_seen_at is written at most this often.
NODE_SEEN_INTERVAL_SECONDS = env.int("NODE_SEEN_INTERVAL_SECONDS", default=60)

# --- News server and planning -----------------------------------------------
# The coordinator's own news server, used to plan ranges (date search, water
# marks) and to relay overviews to nodes, e.g.
# nntps://user:pass@news.example.com:563/?connections=8. Unset: no news server;
# planning and the overview relay answer a clear error. The password is only
# ever shown masked (usenet.nntp.config). A malformed URL fails a system check.
NEWS_SERVER_URL = env.str("NEWS_SERVER_URL", default="")
# Use COMPRESS DEFLATE / XFEATURE COMPRESS GZIP / XZVER when the server offers them.
NEWS_COMPRESSION = env.bool("NEWS_COMPRESSION", default=True)
# Seconds a caller waits for a pooled news-server connection before giving up.
NEWS_POOL_WAIT_SECONDS = env.float("NEWS_POOL_WAIT_SECONDS", default=30.0)
# News-server connections open at once across every worker of every coordinator
# host (the account's cap), held as PostgreSQL advisory-lock slots
# (docs/several-hosts.md). 0: the `connections` of NEWS_SERVER_URL.
NNTP_MAX_CONNECTIONS = env.int("NNTP_MAX_CONNECTIONS", default=0)
# Articles per planned range: one node works through a range in one lease.
PLAN_RANGE_SIZE = env.int("PLAN_RANGE_SIZE", default=50_000)

# Per-minute throughput rows (header_rollup) are kept this many hours; older
# ones are dropped once they are folded into hours (the dashboard's chart).
ROLLUP_MINUTES_KEEP_HOURS = env.int("ROLLUP_MINUTES_KEEP_HOURS", default=48)

# --- Space limits -----------------------------------------------------------
# Range leases pause while pg_database_size() is over this (0: no limit).
DB_MAX_BYTES = env.int("DB_MAX_BYTES", default=0)
# How long a measured database size is trusted, in seconds.
SPACE_CHECK_CACHE_SECONDS = env.float("SPACE_CHECK_CACHE_SECONDS", default=5.0)

# The catalog's own tables (pg_total_relation_size: with indexes and TOAST):
# range leases pause while they are over this (0: no limit).
CATALOG_MAX_BYTES = env.int("CATALOG_MAX_BYTES", default=0)

# --- Catalog ----------------------------------------------------------------
# How often a process checks for a newer rule set, in seconds.
RULES_CHECK_SECONDS = env.float("RULES_CHECK_SECONDS", default=5.0)
# Files per page of /api/v1/files.
CATALOG_PAGE_SIZE = env.int("CATALOG_PAGE_SIZE", default=100)

# --- newznab API -------------------------------------------------------------
# Requests per minute one API key may make (429 beyond); a key's own limit
# wins; 0 means no limit.
NEWZNAB_RATE_LIMIT = env.int("NEWZNAB_RATE_LIMIT", default=120)
# Results per page of t=search and friends: the default and the most a client may ask.
NEWZNAB_DEFAULT_LIMIT = env.int("NEWZNAB_DEFAULT_LIMIT", default=100)
NEWZNAB_MAX_LIMIT = env.int("NEWZNAB_MAX_LIMIT", default=100)
# The server's title in t=caps and feeds.
NEWZNAB_TITLE = env.str("NEWZNAB_TITLE", default="Seed coordinator")

# --- Operators' console -------------------------------------------------------
# The dashboard reloads itself this often, in seconds.
DASHBOARD_REFRESH_SECONDS = env.int("DASHBOARD_REFRESH_SECONDS", default=30)
# /metrics answers a scrape with `Authorization: Bearer METRICS_TOKEN` (unset:
# no token works), from an address in METRICS_ALLOW_IPS (addresses or
# networks; REMOTE_ADDR, so list the proxy if there is one), or to a staff
# session. Set METRICS_ALLOW_IPS to an empty value to allow no address.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOW_IPS = env.list("METRICS_ALLOW_IPS", default=["127.0.0.1", "::1"])
# PROMETHEUS_MULTIPROC_DIR (read by prometheus_client itself): a directory for
# the counters of several gunicorn workers; `manage.py serve` sets var/prometheus.

# Failed admin logins counted in PostgreSQL (shared by every host) per
# username and per client address in a window; past either limit a login
# POST is refused with 429 until the window ends (docs/security.md).
LOGIN_WINDOW_SECONDS = env.int("LOGIN_WINDOW_SECONDS", default=15 * 60)
LOGIN_FAILURES_PER_USER = env.int("LOGIN_FAILURES_PER_USER", default=10)
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=50)

# Log lines: `plain` text, or `json` (one object per line, the request log's
# fields as keys: indexer/log_format.py).
LOG_FORMAT = env.str("LOG_FORMAT", default="plain")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "indexer.log_format.JsonFormatter"},
    },
    # indexer.requests: one key=value line per API request (indexer/request_log.py).
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
