"""Who may call what: nodes for the protocol, nodes or staff for reads.

A node that indexer/authentication.py admitted is a `NodeIdentity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework.permissions import BasePermission


@dataclass(frozen=True)
class NodeIdentity:
    """request.user for a node: the node's id and name, nothing to mutate."""

    id: int
    name: str
    is_authenticated: bool = True
    is_staff: bool = False
    is_active: bool = True

    def __str__(self) -> str:
        return self.name


class IsNode(BasePermission):
    message = "This call needs a node token."

    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, NodeIdentity)


class IsNodeOrStaff(BasePermission):
    message = "This call needs a node token or a staff login."

    def has_permission(self, request: Any, view: Any) -> bool:
        user = request.user
        if isinstance(user, NodeIdentity):
            return True
        return bool(
            user is not None
            and getattr(user, "is_active", False)
            and getattr(user, "is_staff", False)
        )
