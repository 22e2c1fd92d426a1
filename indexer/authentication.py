"""Bearer-token authentication for seed nodes.

The presented token is hashed and looked up by its digest (a unique index),
then compared again in constant time. One query per request: the same
SELECT says whether last_seen_at is due (at most once a minute, time from the
database), and only then is it written. An enabled node's row is then kept
for TOKEN_CACHE_SECONDS (indexer/token_cache.py: the bound on a disabled or
rotated token, and why), so most requests make no query here;
last_seen_at is written when the row is read again, at most that much late.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from core.api.permissions import NodeIdentity
from core.tokens import TOKEN_PREFIX, hash_token, token_matches
from indexer.sql import queries
from indexer.token_cache import cached_node, keep_node


class NodeTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[NodeIdentity, str] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthenticationFailed("Use 'Authorization: Bearer <token>'.")
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            raise AuthenticationFailed("That is not a node token; tokens start with 'sn_'.")
        digest = hash_token(token)
        cached = cached_node(digest)
        if cached is not None and token_matches(token, cached.token_hash):
            return NodeIdentity(id=cached.id, name=cached.name), "node"
        interval = settings.NODE_SEEN_INTERVAL_SECONDS
        row = queries.fetchone("authenticate_node", {"hash": digest, "interval": interval})
        if row is None or not token_matches(token, row.token_hash):
            raise AuthenticationFailed("Unknown token: ask an operator for a new one.")
        if row.disabled:
            raise AuthenticationFailed(
                f"Node {row.name!r} is disabled; ask an operator to enable it."
            )
        if row.seen_due:
            queries.execute("touch_node", {"id": row.id, "interval": interval})
        keep_node(digest, row)
        return NodeIdentity(id=row.id, name=row.name), "node"

    def authenticate_header(self, request: Any) -> str:
        return 'Bearer realm="api"'
