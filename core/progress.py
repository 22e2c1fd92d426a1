"""A progress bar for long management commands, on stderr.

On a terminal it redraws one line (`[#####.....] 12/40 label`); otherwise
(a log file, CI) it prints a plain line at most every `interval` seconds and
at the end, so logs show progress without a line per step.
"""

from __future__ import annotations

import time
from typing import Any


class ProgressBar:
    def __init__(
        self,
        stream: Any,  # a text stream; for commands, self.stderr._out (the raw stream)
        total: int | None = None,
        *,
        unit: str = "",
        width: int = 30,
        interval: float = 5.0,
        tty: bool | None = None,
    ) -> None:
        self.stream = stream
        self.total = total
        self.unit = unit
        self.width = width
        self.interval = interval
        isatty = getattr(stream, "isatty", None)
        self.tty = tty if tty is not None else bool(isatty and isatty())
        self._last_line: float | None = None  # the first update always prints
        self._drawn = False
        self._pending: str | None = None  # a line held back by the interval

    def text(self, done: int, label: str = "") -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.total:
            filled = self.width * min(done, self.total) // self.total
            bar = "#" * filled + "." * (self.width - filled)
            text = f"[{bar}] {done:,}/{self.total:,}{unit}"
        else:
            text = f"{done:,}{unit}"
        return f"{text} {label}".rstrip()

    def update(self, done: int, label: str = "") -> None:
        if self.tty:
            self.stream.write(f"\r{self.text(done, label)}\x1b[K")
            self.stream.flush()
            self._drawn = True
            return
        now = time.monotonic()
        final = self.total is not None and done >= self.total
        line = self.text(done, label)
        if final or self._last_line is None or now - self._last_line >= self.interval:
            self._last_line = now
            self._pending = None
            self.stream.write(line + "\n")
            self.stream.flush()
        else:
            self._pending = line

    def finish(self) -> None:
        """End the bar: a newline on a terminal, else the last line held back, if any."""
        if self.tty and self._drawn:
            self.stream.write("\n")
        elif self._pending is not None:
            self.stream.write(self._pending + "\n")
            self._pending = None
        self.stream.flush()
