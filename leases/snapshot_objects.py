"""Snapshots in object storage (SNAPSHOT_STORAGE=s3), through Django's storage API.

`STORAGES["snapshots"]` is django-storages' S3Storage (any S3-compatible
service). Each upload goes to an object of its own (a new key); the commit
that records it switches the lane's row to that key and retires the old
object, which the upkeep deletes once every presigned URL of it has expired
(``remove_expired_objects``). A reader resolves the key from the row, so the
object it gets always matches the row's position, and it stays for as long
as the URL it was given is valid. Downloads bypass the
coordinator: the API answers with a redirect to a presigned URL
(docs/api.md, docs/several-hosts.md). Uploads stream through the coordinator.
"""

from __future__ import annotations

import io
import logging
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages

from core.errors import DomainError, Unavailable

from .models import Lane
from .snapshots import CHUNK_BYTES
from .sql import queries

log = logging.getLogger(__name__)


def in_object_storage() -> bool:
    return bool(settings.SNAPSHOT_STORAGE == "s3")


def snapshot_storage() -> Storage:
    return storages["snapshots"]


def new_key(group_id: int, lane: str) -> str:
    """An object key no other upload uses (two uploads of a lane never share one)."""
    return f"snapshots/group-{group_id}-{Lane(lane).value}-{secrets.token_hex(8)}"


class _BodyFile(io.RawIOBase):
    """A body's checked chunks (``snapshots.checked_body``) as a file to read."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._pending = b""
        self.size = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self.size += len(chunk)
            self._pending = chunk
        count = min(len(buffer), len(self._pending))
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]
        return count


@contextmanager
def _store_errors(doing: str) -> Iterator[None]:
    """A failing object store is the coordinator's problem: 503, the node tries again."""
    try:
        yield
    except DomainError:
        raise
    except Exception as exc:
        log.warning("snapshot store: %s failed: %s", doing, exc.__class__.__name__)
        raise Unavailable(
            f"The coordinator could not {doing} the snapshot in object storage; try again later."
        ) from exc


def save_object(key: str, body: Iterable[bytes]) -> int:
    """Stream a checked body (``snapshots.checked_body``) into a new object under `key`;
    its size. Nothing is left on failure."""
    file = _BodyFile(body)
    try:
        with _store_errors("store"):
            snapshot_storage().save(key, File(io.BufferedReader(file, CHUNK_BYTES), name=key))
    except BaseException:
        delete_object(key)
        raise
    return file.size


def delete_object(key: str) -> bool:
    """Delete an object no row names any more; whether it went. A failure is logged,
    never raised."""
    try:
        snapshot_storage().delete(key)
    except Exception as exc:
        log.warning("snapshot store: could not delete %s: %s", key, exc.__class__.__name__)
        return False
    return True


# Past the URLs' validity: a host whose clock runs a little ahead signs URLs
# that S3 honours a little longer.
URL_MARGIN_SECONDS = 60
_RETIRED_PER_SWEEP = 1000


def remove_expired_objects() -> int:
    """Delete replaced objects whose every presigned URL has expired; returns how many.

    An upload's commit retires the object it replaces instead of deleting it
    after the commit: a node that was handed that object's URL a moment
    before still downloads it whole (a deleted object answered 404, and moto
    a 500 to a download under way). Registered with seeding's maintenance
    (leases/apps.py). A failed delete stays retired and is tried again.
    """
    if not in_object_storage():
        return 0
    rows = queries.fetchall(
        "expired_snapshot_objects",
        {
            "seconds": settings.SNAPSHOT_URL_SECONDS + URL_MARGIN_SECONDS,
            "limit": _RETIRED_PER_SWEEP,
        },
    )
    gone = [row.key for row in rows if delete_object(row.key)]
    if gone:
        queries.execute("forget_snapshot_objects", {"keys": gone})
    return len(gone)


def download_url(key: str) -> str:
    """A presigned URL for the object, valid for SNAPSHOT_URL_SECONDS."""
    with _store_errors("sign a download of"):
        # S3Storage.url takes how long the signature is valid.
        return str(snapshot_storage().url(key, expire=settings.SNAPSHOT_URL_SECONDS))  # type: ignore[call-arg]
