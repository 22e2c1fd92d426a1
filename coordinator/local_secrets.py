"""The SECRET_KEY a coordinator makes for itself when none is set.

On first start a random key is written to var/secret-key (mode 0600, like
var/admin-password) and read back on every later start, so sessions outlive
a restart and no public development key ever signs a cookie. Several hosts
behind one name need one SECRET_KEY in their environment instead (check
indexer.W002).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def local_secret_key(path: Path) -> str:
    """The key kept at `path`, made (50 random bytes, URL-safe) if there is none."""
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    try:
        # O_EXCL: two processes starting at once keep the first one's key.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key + "\n")
    return key
