"""System checks that catch misconfiguration before the coordinator serves."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

# The key this project shipped as a development default before keys were
# made per host: public, so anyone could sign a session or messages cookie.
PUBLIC_DEVELOPMENT_KEY = "dev-only-insecure-key-change-me"


@register(Tags.security)
def check_secret_key(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """The old public development key is refused everywhere; a key made on
    this host (SECRET_KEY unset) is fine for one host, not for several."""
    hint = "Set SECRET_KEY in the environment to a long random string."
    if settings.SECRET_KEY == PUBLIC_DEVELOPMENT_KEY:
        return [Error("SECRET_KEY is the public development key.", hint=hint, id="indexer.E009")]
    if settings.SECRET_KEY_FILE is not None and not settings.EMBEDDED_DATABASE:
        return [
            Warning(
                f"SECRET_KEY is unset: this host made its own ({settings.SECRET_KEY_FILE}).",
                hint=hint + " Every coordinator host behind one name needs the same key.",
                id="indexer.W002",
            )
        ]
    return []


@register()
def check_leasing_settings(app_configs: Any, **kwargs: Any) -> list[Error]:
    errors = []
    if settings.LEASE_TTL_SECONDS < 10:
        errors.append(
            Error("LEASE_TTL_SECONDS is under 10 seconds.", hint="Use minutes.", id="indexer.E001")
        )
    if settings.MAX_ATTEMPTS < 1:
        errors.append(Error("MAX_ATTEMPTS must be at least 1.", id="indexer.E002"))
    if settings.API_MAX_BODY_BYTES < 1024:
        errors.append(Error("API_MAX_BODY_BYTES must be at least 1024.", id="indexer.E003"))
    if settings.DB_MAX_BYTES < 0:
        errors.append(
            Error("DB_MAX_BYTES cannot be negative (0 means no limit).", id="indexer.E004")
        )
    if settings.CATALOG_MAX_BYTES < 0:
        errors.append(
            Error("CATALOG_MAX_BYTES cannot be negative (0 means no limit).", id="indexer.E006")
        )
    if settings.RULES_CHECK_SECONDS < 0:
        errors.append(Error("RULES_CHECK_SECONDS cannot be negative.", id="indexer.E007"))
    if not 1 <= settings.CATALOG_PAGE_SIZE <= 1000:
        errors.append(Error("CATALOG_PAGE_SIZE must be 1 to 1000.", id="indexer.E008"))
    if settings.TAIL_PRIORITY >= settings.DEFAULT_PRIORITY:
        errors.append(
            Error(
                "TAIL_PRIORITY must be more urgent (lower) than DEFAULT_PRIORITY.",
                hint="A lower priority number is more urgent.",
                id="indexer.E005",
            )
        )
    if settings.LEASE_PRIORITY_MIN > settings.LEASE_PRIORITY_MAX:
        errors.append(
            Error(
                "LEASE_PRIORITY_MIN is above LEASE_PRIORITY_MAX: the history lane gets no ranges.",
                id="indexer.E010",
            )
        )
    if settings.SNAPSHOT_MAX_BYTES < 1:
        errors.append(Error("SNAPSHOT_MAX_BYTES must be at least 1.", id="indexer.E011"))
    if settings.SNAPSHOT_STORAGE not in ("filesystem", "s3"):
        errors.append(
            Error(
                f"SNAPSHOT_STORAGE is {settings.SNAPSHOT_STORAGE!r}.",
                hint="Use filesystem (SNAPSHOT_DIR) or s3 (docs/several-hosts.md).",
                id="indexer.E012",
            )
        )
    if settings.SNAPSHOT_URL_SECONDS < 1:
        errors.append(Error("SNAPSHOT_URL_SECONDS must be at least 1.", id="indexer.E013"))
    return errors


@register()
def check_news_server(app_configs: Any, **kwargs: Any) -> list[Error]:
    from usenet.nntp.config import NewsServerConfig

    errors = []
    if settings.NEWS_SERVER_URL:
        try:
            NewsServerConfig.from_url(settings.NEWS_SERVER_URL)
        except ValueError as exc:  # the message masks the password
            errors.append(
                Error(
                    f"NEWS_SERVER_URL is malformed: {exc}",
                    hint="Use nntp://host:119 or nntps://user:pass@host:563/?connections=8.",
                    id="indexer.E020",
                )
            )
    if settings.PLAN_RANGE_SIZE < 1:
        errors.append(Error("PLAN_RANGE_SIZE must be at least 1.", id="indexer.E021"))
    if settings.NNTP_MAX_CONNECTIONS < 0:
        errors.append(
            Error(
                "NNTP_MAX_CONNECTIONS cannot be negative "
                "(0 means the connections of NEWS_SERVER_URL).",
                id="indexer.E022",
            )
        )
    return errors
