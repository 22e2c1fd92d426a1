"""Writes of the newznab app: API keys (issue, rotate, disable) and the per-call counters.

A key is shown once; only its SHA-256 digest is kept and the presented key
is compared with it in constant time. No key ever reaches a log or an audit
entry: those name the key's user.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Now

from core.errors import Invalid, NameTaken, NotFound
from indexer.models import AuditAction
from indexer.services import AUDIT_IDS_SHOWN, record_audit

from .errors import ApiKeyDisabled, BadApiKey, RateLimited
from .keys import KEY_LENGTH, api_key_matches, hash_api_key, new_api_key
from .models import ApiKey
from .sql import queries

OBJECT_TYPE = "api key"


@dataclass(frozen=True, slots=True)
class ApiCaller:
    """Who is calling the newznab API: the key's id and its user's name."""

    key_id: int
    name: str


def issue_api_key(
    name: str, *, actor: Any = None, rate_limit: int | None = None
) -> tuple[ApiKey, str]:
    """A new API user and its key (shown once)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise Invalid("name: an API user's name is 1 to 100 characters.")
    if ApiKey.objects.filter(name=name).exists():
        raise NameTaken(f"name: an API user {name!r} exists; rotate its key instead.")
    key = new_api_key()
    api_key = ApiKey.objects.create(name=name, key_hash=hash_api_key(key), rate_limit=rate_limit)
    record_audit(
        actor, AuditAction.TOKEN_ISSUED, OBJECT_TYPE, 1, {"api_key": name, "id": api_key.pk}
    )
    return api_key, key


@transaction.atomic
def rotate_api_keys(key_ids: Iterable[int], *, actor: Any = None) -> list[tuple[ApiKey, str]]:
    """A new key for each of these users; their old keys stop working at once."""
    rotated = []
    for api_key in ApiKey.objects.filter(id__in=list(key_ids)).select_for_update():
        key = new_api_key()
        api_key.key_hash = hash_api_key(key)
        api_key.rotated_at = Now()
        api_key.save(update_fields=["key_hash", "rotated_at"])
        rotated.append((api_key, key))
    ids = [api_key.pk for api_key, _ in rotated]
    record_audit(
        actor, AuditAction.TOKEN_ROTATED, OBJECT_TYPE, len(rotated), {"ids": ids[:AUDIT_IDS_SHOWN]}
    )
    return rotated


def set_api_keys_disabled(key_ids: Iterable[int], disabled: bool, *, actor: Any = None) -> int:
    ids = list(key_ids)
    count = ApiKey.objects.filter(id__in=ids).exclude(disabled=disabled).update(disabled=disabled)
    action = AuditAction.API_KEYS_DISABLED if disabled else AuditAction.API_KEYS_ENABLED
    record_audit(actor, action, OBJECT_TYPE, count, {"ids": ids[:AUDIT_IDS_SHOWN]})
    return count


# --- one key by its user's name (the commands): the same writes as the admin's list ---


def api_key_named(name: str, *, lock: bool = False) -> ApiKey:
    """The API user of this name (locked for the transaction with `lock`); NotFound otherwise."""
    keys = ApiKey.objects.select_for_update() if lock else ApiKey.objects
    try:
        return keys.get(name=name.strip())
    except ApiKey.DoesNotExist:
        raise NotFound(f"No API user is named {name.strip()!r}.") from None


@transaction.atomic
def rotate_api_key(name: str, *, actor: Any = None) -> tuple[ApiKey, str]:
    """A new key for the user of this name (shown once), refused while the user is disabled:
    its new key would not work, and a script would take it for one that does."""
    api_key = api_key_named(name, lock=True)
    if api_key.disabled:
        raise ApiKeyDisabled(
            f"The API user {api_key.name!r} is disabled; enable it first "
            f"(manage.py enable_api_key {api_key.name}), then rotate its key."
        )
    [rotated] = rotate_api_keys([api_key.pk], actor=actor)
    return rotated


def set_api_key_disabled(name: str, disabled: bool, *, actor: Any = None) -> tuple[ApiKey, int]:
    """Disable or enable the user of this name: (the user, 1 if it changed, else 0)."""
    api_key = api_key_named(name)
    return api_key, set_api_keys_disabled([api_key.pk], disabled, actor=actor)


def authenticate(key: str) -> ApiCaller:
    """The caller a key belongs to, with this call counted; BadApiKey, ApiKeyDisabled or
    RateLimited (the call is still counted, as limited) otherwise."""
    key = key.strip()
    if len(key) != KEY_LENGTH:
        raise BadApiKey("Incorrect user credentials")
    row = queries.fetchone(
        "find_api_key",
        {"hash": hash_api_key(key), "default_limit": settings.NEWZNAB_RATE_LIMIT},
    )
    if row is None or not api_key_matches(key, row.key_hash):
        raise BadApiKey("Incorrect user credentials")
    if row.disabled:
        raise ApiKeyDisabled("Account suspended")
    counted = queries.fetchone("count_request", {"key_id": row.id, "limit": row.rate_limit})
    assert counted is not None
    if row.rate_limit and counted.requests > row.rate_limit:
        raise RateLimited(
            f"Request limit reached ({row.rate_limit} a minute)", retry_after=counted.retry_after
        )
    return ApiCaller(key_id=row.id, name=row.name)


def count_grab(caller: ApiCaller, release_id: int) -> None:
    """A t=get: on the key's day and on the release (newznab:attr grabs)."""
    queries.execute("count_grab", {"key_id": caller.key_id})
    queries.execute("count_release_grab", {"release_id": release_id})
