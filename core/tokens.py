"""Node tokens: `sn_` + base64url of 24 random bytes, stored only as SHA-256 hex."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

TOKEN_PREFIX = "sn_"  # noqa: S105 (a prefix, not a secret)


def new_token() -> str:
    return TOKEN_PREFIX + base64.urlsafe_b64encode(secrets.token_bytes(24)).decode("ascii")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented token with a stored digest."""
    return hmac.compare_digest(hash_token(token), stored_hash)
