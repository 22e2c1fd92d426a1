"""Who may call what: nodes for the protocol, nodes or staff for reads."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from indexer.api.authentication import NodeIdentity


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
