"""Loaded only by processes the clock-skew tests start under libfaketime (tests/chaos/clocks.py).

With the monotonic clock left real (FAKETIME_DONT_FAKE_MONOTONIC), libfaketime's
clock_nanosleep refuses the absolute monotonic deadline `time.sleep` passes it
(EINVAL); a timed wait on an Event, which the library leaves alone, sleeps the
same interval on the real monotonic clock.
"""

import threading
import time


def _sleep(seconds: float) -> None:
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    threading.Event().wait(seconds)


time.sleep = _sleep
