"""What a call costs in CPU time, to compare two inputs within one test.

Never a speed to assert: tests compare the cost of a hostile input with a
baseline the same code reads in linear time, measured in the same test. CPU
time of this process, not the wall clock, so other work on the machine does
not count; the least of several repeats, so an interruption does not either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def cpu_cost(function: Callable[[Any], object], argument: Any, *, calls: int = 20) -> int:
    """The least CPU time, in nanoseconds (at least 1), of `calls` calls, over five repeats."""
    best: int | None = None
    for _ in range(5):
        start = time.process_time_ns()
        for _ in range(calls):
            function(argument)
        spent = time.process_time_ns() - start
        best = spent if best is None else min(best, spent)
    assert best is not None
    return max(best, 1)
