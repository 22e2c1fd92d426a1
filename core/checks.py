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


@register(Tags.security, deploy=True)
def check_csrf_middleware(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """Django's security.W003 and W016, for Django's CSRF middleware or a subclass.

    Django finds its middleware by the dotted path alone, so the subclass installed
    here (core.api.node_calls.CsrfViewMiddleware, which lets node-token calls pass)
    would make W003 warn and W016 (CSRF_COOKIE_SECURE) never look: W003 is silenced
    in coordinator/settings.py and both are checked here instead."""
    from django.middleware.csrf import CsrfViewMiddleware
    from django.utils.module_loading import import_string

    installed = [import_string(path) for path in settings.MIDDLEWARE]
    if not any(isinstance(m, type) and issubclass(m, CsrfViewMiddleware) for m in installed):
        return [
            Warning(
                "No CSRF middleware is in MIDDLEWARE: the admin's forms are not protected "
                "against cross-site requests.",
                hint="Install core.api.node_calls.CsrfViewMiddleware (or Django's).",
                id="indexer.W004",
            )
        ]
    if not settings.CSRF_USE_SESSIONS and settings.CSRF_COOKIE_SECURE is not True:
        return [
            Warning(
                "CSRF_COOKIE_SECURE is not True: the CSRF cookie is sent over plain HTTP too.",
                hint="Serve over HTTPS and set SECURE_COOKIES=true (docs/deploy.md).",
                id="indexer.W005",
            )
        ]
    return []


# (broken, message, hint, id): a setting out of its range.
Rule = tuple[bool, str, str | None, str]


def _errors(rules: list[Rule]) -> list[Error]:
    return [Error(message, hint=hint, id=id_) for broken, message, hint, id_ in rules if broken]


@register()
def check_leasing_settings(app_configs: Any, **kwargs: Any) -> list[Error]:
    # One variable's type and bounds are checked as it is read
    # (coordinator/settings.toml); these rules are the operator's advice.
    s = settings
    return _errors([
        (s.LEASE_TTL_SECONDS < 10, "LEASE_TTL_SECONDS is under 10 seconds.", "Use minutes.",
         "indexer.E001"),
        (s.TAIL_PRIORITY >= s.DEFAULT_PRIORITY,
         "TAIL_PRIORITY must be more urgent (lower) than DEFAULT_PRIORITY.",
         "A lower priority number is more urgent.", "indexer.E005"),
        (s.LEASE_PRIORITY_MIN > s.LEASE_PRIORITY_MAX,
         "LEASE_PRIORITY_MIN is above LEASE_PRIORITY_MAX: the history lane gets no ranges.",
         None, "indexer.E010"),
    ])  # fmt: skip


@register()
def check_newznab_limits(app_configs: Any, **kwargs: Any) -> list[Warning]:
    if settings.NEWZNAB_DEFAULT_LIMIT <= settings.NEWZNAB_MAX_LIMIT:
        return []
    return [
        Warning(
            "NEWZNAB_DEFAULT_LIMIT is above NEWZNAB_MAX_LIMIT: t=caps shows a default that no "
            "page reaches.",
            hint="A page holds NEWZNAB_MAX_LIMIT results at most; lower the default.",
            id="indexer.W003",
        )
    ]


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
    ])  # fmt: skip
