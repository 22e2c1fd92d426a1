"""What the base app tells the layers above it, which it never imports.

`nodes_disabled` is sent inside the transaction that disables nodes, with
their ids; seeding and leases end the nodes' leases at once and answer a
dict of counts ({"ranges_ended": n}), which the audit entry records
(docs/architecture.md, "Inverted dependencies").
"""

from __future__ import annotations

from django.dispatch import Signal

nodes_disabled = Signal()
