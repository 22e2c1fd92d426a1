"""Plain-text tables for management commands: numbers right-aligned, a rule under the header."""

from __future__ import annotations

from typing import Any

from usenet.numbers import ascii_digits


def format_table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [
        ["" if c is None else str(c) for c in row] for row in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for index, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.rjust(w) if index and ascii_digits(c.replace(",", "")) else c.ljust(w)
                for c, w in zip(row, widths, strict=True)
            ).rstrip()
        )
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
