"""What the seeding app tells the layers above it, which it never imports.

`range_finished` is sent inside the finish's transaction with the range's
id, group id and headers; the leases app counts the range on the lane that
handed it out (docs/architecture.md, "Inverted dependencies").
"""

from __future__ import annotations

from django.dispatch import Signal

range_finished = Signal()
