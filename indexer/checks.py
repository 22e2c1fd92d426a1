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


# (broken, message, hint, id): a setting out of its range.
Rule = tuple[bool, str, str | None, str]


def _errors(rules: list[Rule]) -> list[Error]:
    return [Error(message, hint=hint, id=id_) for broken, message, hint, id_ in rules if broken]


@register()
def check_leasing_settings(app_configs: Any, **kwargs: Any) -> list[Error]:
    s = settings
    storage_hint = "Use filesystem (SNAPSHOT_DIR) or s3 (docs/several-hosts.md)."
    return _errors([
        (s.LEASE_TTL_SECONDS < 10, "LEASE_TTL_SECONDS is under 10 seconds.", "Use minutes.",
         "indexer.E001"),
        (s.MAX_ATTEMPTS < 1, "MAX_ATTEMPTS must be at least 1.", None, "indexer.E002"),
        (s.API_MAX_BODY_BYTES < 1024, "API_MAX_BODY_BYTES must be at least 1024.", None,
         "indexer.E003"),
        (s.DB_MAX_BYTES < 0, "DB_MAX_BYTES cannot be negative (0 means no limit).", None,
         "indexer.E004"),
        (s.CATALOG_MAX_BYTES < 0, "CATALOG_MAX_BYTES cannot be negative (0 means no limit).",
         None, "indexer.E006"),
        (s.RULES_CHECK_SECONDS < 0, "RULES_CHECK_SECONDS cannot be negative.", None,
         "indexer.E007"),
        (not 1 <= s.CATALOG_PAGE_SIZE <= 1000, "CATALOG_PAGE_SIZE must be 1 to 1000.", None,
         "indexer.E008"),
        (s.TAIL_PRIORITY >= s.DEFAULT_PRIORITY,
         "TAIL_PRIORITY must be more urgent (lower) than DEFAULT_PRIORITY.",
         "A lower priority number is more urgent.", "indexer.E005"),
        (s.LEASE_PRIORITY_MIN > s.LEASE_PRIORITY_MAX,
         "LEASE_PRIORITY_MIN is above LEASE_PRIORITY_MAX: the history lane gets no ranges.",
         None, "indexer.E010"),
        (s.SNAPSHOT_MAX_BYTES < 1, "SNAPSHOT_MAX_BYTES must be at least 1.", None,
         "indexer.E011"),
        (s.SNAPSHOT_STORAGE not in ("filesystem", "s3"),
         f"SNAPSHOT_STORAGE is {s.SNAPSHOT_STORAGE!r}.", storage_hint, "indexer.E012"),
        (s.SNAPSHOT_URL_SECONDS < 1, "SNAPSHOT_URL_SECONDS must be at least 1.", None,
         "indexer.E013"),
    ])  # fmt: skip


@register()
def check_news_server(app_configs: Any, **kwargs: Any) -> list[Error]:
    from usenet.nntp.config import NewsServerConfig

    malformed = ""
    if settings.NEWS_SERVER_URL:
        try:
            NewsServerConfig.from_url(settings.NEWS_SERVER_URL)
        except ValueError as exc:  # the message masks the password
            malformed = str(exc)
    return _errors([
        (bool(malformed), f"NEWS_SERVER_URL is malformed: {malformed}",
         "Use nntp://host:119 or nntps://user:pass@host:563/?connections=8.", "indexer.E020"),
        (settings.PLAN_RANGE_SIZE < 1, "PLAN_RANGE_SIZE must be at least 1.", None,
         "indexer.E021"),
        (settings.NNTP_MAX_CONNECTIONS < 0,
         "NNTP_MAX_CONNECTIONS cannot be negative (0 means the connections of NEWS_SERVER_URL).",
         None, "indexer.E022"),
    ])  # fmt: skip
