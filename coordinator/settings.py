"""The coordinator's one settings module, read from the environment.

Every variable it reads is declared in `settings.toml` (type, default, bounds,
meaning; docs/settings.md lists them). Every default works on a laptop;
production sets SECRET_KEY, DEBUG=0, ALLOWED_HOSTS and DATABASE_URL. A value
out of bounds stops the start; the rest is judged by system checks
(`core/checks.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environ

from coordinator.environment import Environment, SettingError, database_config
from coordinator.local_secrets import local_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
# A checkout (manage.py beside the apps) keeps its data and .env at its root; an
# installed coordinator (`pip install .`, `seed-coordinator`) never writes into
# site-packages: it uses the current directory, or DATA_DIR.
_CHECKOUT = (BASE_DIR / "manage.py").exists()
_HOME = BASE_DIR if _CHECKOUT else Path.cwd()

environ.Env.read_env(_HOME / ".env", overwrite=False)
env = Environment()  # every variable read below is an entry of settings.toml
VAR_DIR = DATA_DIR = (env("DATA_DIR") or _HOME / "var").absolute()
# The settings named after their variables: DEBUG, ALLOWED_HOSTS, BIND,
# LEASE_TTL_SECONDS, ... (every entry of settings.toml without `setting = false`).
globals().update(env.settings(data_dir=VAR_DIR))

# Unset, a random key is made on first start and kept in var/secret-key
# (coordinator/local_secrets.py): there is no public development key.
_KEY = env("SECRET_KEY")
SECRET_KEY_FILE = None if _KEY else VAR_DIR / "secret-key"
SECRET_KEY = _KEY or local_secret_key(VAR_DIR / "secret-key")

# --- HTTPS (docs/security.md, "Deployment") ----------------------------------
# The TLS proxy's header that says "https" (e.g. HTTP_X_FORWARDED_PROTO).
_PROXY_HEADER = env("SECURE_PROXY_SSL_HEADER")
SECURE_PROXY_SSL_HEADER = (_PROXY_HEADER, "https") if _PROXY_HEADER else None
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env("SECURE_COOKIES")
# Database sessions that look up only a key of a key's form (core/sessions.py).
SESSION_ENGINE = "core.sessions"
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
    "core",
    "indexer",
    "catalog",
    "seeding",
    "inspections",
    "leases",
    "newznab",
    "console",
]

# security.W003 looks for Django's CSRF middleware by its dotted path; the one
# installed here (core.api.node_calls.CsrfViewMiddleware) is that class, subclassed
# only to pass node-token calls, which carry no cookie (docs/security.md). The
# deploy check core.checks.check_csrf_middleware asks W003's and W016's questions
# of it instead (indexer.W004, indexer.W005).
SILENCED_SYSTEM_CHECKS = ["security.W003"]

MIDDLEWARE = [
    # The client's address behind a trusted proxy, for limits and logs (core/client_address.py).
    "core.client_address.ClientAddressMiddleware",
    # /healthz and /readyz, before the host check and the HTTPS redirect (coordinator/health.py).
    "coordinator.health.HealthCheckMiddleware",
    # A page that failed because the database is switching: 503 "retry in a few seconds".
    "core.database_faults.DatabaseSwitchingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.request_log.ApiRequestLogMiddleware",
    "core.api.middleware.ApiErrorMiddleware",
    "core.api.middleware.QueueWaitMiddleware",
    # A body its route or its caller may not send is refused unread (core/api/bodies.py).
    "core.api.bodies.BodyLimitMiddleware",
    # Django's session, CSRF, user and messages middleware, which a node's call
    # (a node token under /api/) passes by: it has no session (core/api/node_calls.py).
    "core.api.node_calls.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "core.api.node_calls.CsrfViewMiddleware",
    "core.api.node_calls.AuthenticationMiddleware",
    # Before CSRF's check reads a form: a large one only for a real session.
    "core.api.bodies.SessionBodyGate",
    "core.api.node_calls.MessageMiddleware",
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
# var/pg is started on first connect (core/embedded_postgres).
EMBEDDED_DATABASE = not env("DATABASE_URL")
if EMBEDDED_DATABASE:
    DATABASES = {
        "default": {
            "ENGINE": "core.embedded_postgres",
            "NAME": env("EMBEDDED_DATABASE_NAME"),
            "USER": "postgres",
            "EMBEDDED_DIR": str(env("EMBEDDED_DATABASE_DIR", data_dir=VAR_DIR)),
        }
    }
else:
    DATABASES = {"default": database_config(env("DATABASE_URL"))}
# A streaming replica for the reads that tolerate lag (core/replicas.py): each
# such read names it at its call site; everything else is the primary's.
if env("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = database_config(env("DATABASE_REPLICA_URL"), "DATABASE_REPLICA_URL")
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["core.replicas.PrimaryRouter"]
for _database in DATABASES.values():
    # Persistent connections are checked before reuse; one a failover broke is
    # dropped at once (core/database_faults.py).
    _database["CONN_MAX_AGE"] = env("DB_CONN_MAX_AGE")
    _database["CONN_HEALTH_CHECKS"] = True
    _database.setdefault("OPTIONS", {})
    _database["OPTIONS"].setdefault("connect_timeout", env("DB_CONNECT_TIMEOUT"))
    # Server-side binding lets psycopg prepare the hot statements; a pooler in
    # transaction mode cannot keep prepared statements (DB_PREPARE=0).
    if env("DB_PREPARE"):
        _database["OPTIONS"].setdefault("server_side_binding", True)
        _database["OPTIONS"].setdefault("prepare_threshold", 2)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"

# --- Node API ---------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["indexer.authentication.NodeTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.IsNode"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.negotiation.NodeFirstNegotiation",
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
DATA_UPLOAD_MAX_MEMORY_SIZE = env("API_MAX_BODY_BYTES")

# --- Lane snapshots (docs/several-hosts.md, "Snapshot storage") ---------------
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "snapshots": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(env("SNAPSHOT_DIR", data_dir=VAR_DIR))},
    },
}
if env("SNAPSHOT_STORAGE") == "s3":
    if not env("SNAPSHOT_S3_BUCKET"):
        raise SettingError(
            "SNAPSHOT_STORAGE=s3 needs SNAPSHOT_S3_BUCKET, the bucket snapshots are kept in."
        )
    STORAGES["snapshots"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env("SNAPSHOT_S3_BUCKET"),
            "endpoint_url": env("SNAPSHOT_S3_ENDPOINT_URL") or None,
            "region_name": env("SNAPSHOT_S3_REGION") or None,
            "access_key": env("SNAPSHOT_S3_ACCESS_KEY_ID") or None,
            "secret_key": env("SNAPSHOT_S3_SECRET_ACCESS_KEY") or None,
            "querystring_auth": True,
            "file_overwrite": True,
            "default_acl": None,
        },
    }
# The fault suite's crash points (core/crashpoints.py): never read from the
# environment; only tests/chaos/settings.py turns them on.
CRASH_POINTS = False

# --- Logs ---------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "core.log_format.JsonFormatter"},
    },
    # indexer.requests: one key=value line per API request (core/request_log.py).
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": env("LOG_FORMAT")}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
