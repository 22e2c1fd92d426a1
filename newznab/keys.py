"""newznab API keys: 32 hex characters (what clients expect), stored only as SHA-256 hex."""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_LENGTH = 32


def new_api_key() -> str:
    return secrets.token_hex(KEY_LENGTH // 2)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def api_key_matches(key: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented key with a stored digest."""
    return hmac.compare_digest(hash_api_key(key), stored_hash)
