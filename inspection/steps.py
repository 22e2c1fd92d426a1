"""A count of the work the parsers do, so that tests can hold it linear in the input.

Each parser adds to ``STEPS.taken`` once per loop turn and per byte it hashes
or copies in bulk; a test reads the count before and after a parse and bounds
it by the input's size. Wall-clock time is never asserted: a count does not
depend on the machine. The count is a plain integer shared by every thread,
only ever read by tests.
"""

from __future__ import annotations

__all__ = ["STEPS", "Steps"]


class Steps:
    """A running total of loop turns and bytes touched."""

    __slots__ = ("taken",)

    def __init__(self) -> None:
        self.taken = 0

    def take(self, count: int = 1) -> None:
        self.taken += count


STEPS = Steps()
