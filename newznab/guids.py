"""Release guids: stable, globally unique, and read back to the release they name.

A guid is a UUID version 8 (RFC 9562, custom layout): 60 bits of this
installation's identity and the release id (62 bits). Prowlarr and NZBHydra2
dedupe across indexers by guid, so two coordinators' release 17 must differ;
Sonarr's and Radarr's blocklists keep it, so it must never change. The
identity is a random UUID the newznab migration stored in the database
(`newznab_installation`), shared by every host of one installation and kept
by its backups; nothing secret goes into it. A guid is read back without a
lookup table: its identity bits must be this installation's, the rest is the
release id.

    bits 127-80  identity (48)     bits 79-76  version 8
    bits 75-64   identity (12)     bits 63-62  variant 0b10
    bits 61-0    release id
"""

from __future__ import annotations

import uuid

from core.errors import MAX_ROW_ID
from usenet.numbers import NotANumber, ascii_digits, whole_number

from .errors import NoSuchItem

RELEASE_ID_BITS = 62
MAX_GUID_RELEASE_ID = 2**RELEASE_ID_BITS - 1
# The longest text a UUID is written as ("urn:uuid:" and 36 characters).
MAX_GUID_LENGTH = 45
_VERSION = 8 << 76
_VARIANT = 0b10 << 62
_VERSION_AND_VARIANT = (0xF << 76) | (0b11 << 62)


def identity_bits(installation: uuid.UUID) -> int:
    """The 60 bits of the installation's identity a guid carries, in their places."""
    top = installation.int >> 68  # the identity's first 60 bits
    return ((top >> 12) << 80) | ((top & 0xFFF) << 64)


def release_guid(installation: uuid.UUID, release_id: int) -> str:
    if not 0 < release_id <= MAX_GUID_RELEASE_ID:
        raise ValueError(f"a release id of at most {RELEASE_ID_BITS} bits, not {release_id}")
    return str(uuid.UUID(int=identity_bits(installation) | _VERSION | _VARIANT | release_id))


def release_id_of(value: str, installation: uuid.UUID) -> int:
    """The release a t=get/t=details id names: a guid this installation gave, or the
    release number earlier versions gave (clients keep them). Anything else is
    newznab error 300 with a sentence saying what was expected."""
    text = value.strip()
    if ascii_digits(text):
        try:
            return whole_number(text, high=MAX_ROW_ID)
        except NotANumber:
            raise NoSuchItem(f"No such item ({text[:40]}: no release has that number)") from None
    try:
        # uuid.UUID reads its hex digits with int(): Arabic-Indic digits would pass.
        if len(text) > MAX_GUID_LENGTH or not text.isascii():
            raise ValueError(text)
        guid = uuid.UUID(text)
    except ValueError:
        raise NoSuchItem(
            f"No such item ({text[:40]}: an id is the guid of an item this indexer listed, "
            "such as 0f1e2d3c-4b5a-8978-8000-000000000011, or a release number)"
        ) from None
    number = guid.int
    mine = identity_bits(installation) | _VERSION | _VARIANT
    if number & ~MAX_GUID_RELEASE_ID != mine or not number & MAX_GUID_RELEASE_ID:
        raise NoSuchItem(f"No such item ({text}: not a guid this indexer gave)")
    return number & MAX_GUID_RELEASE_ID
