"""Server-rendered SVG for the dashboard: coverage maps and the hourly chart.

Plain inline SVG strings (no JavaScript, nothing fetched from elsewhere).
Adjacent bins of one status are drawn as one rectangle, so a map is a few
dozen elements however long the group is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import groupby

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from .selectors import Coverage

COLOURS = {
    "done": "#2e7d32",
    "reached": "#81c784",
    "leased": "#f9a825",
    "queued": "#90a4ae",
    "failed": "#c62828",
    "gap": "#eeeeee",
}
MAP_WIDTH = 600
MAP_HEIGHT = 16


def coverage_svg(coverage: Coverage, label: str) -> SafeString:
    """One group's span as coloured bins, with a tick at each resume point."""
    count = len(coverage.bins)
    step = MAP_WIDTH / count
    parts: list[str] = []
    index = 0
    for status, run in groupby(coverage.bins):
        length = len(list(run))
        parts.append(
            format_html(
                '<rect class="bin-{}" x="{}" y="0" width="{}" height="{}" fill="{}">'
                "<title>{}</title></rect>",
                status,
                f"{index * step:.1f}",
                f"{length * step:.1f}",
                MAP_HEIGHT,
                COLOURS.get(status, "#000"),
                status,
            )
        )
        index += length
    span = coverage.high - coverage.low + 1
    for point in coverage.resume_points:
        x = (point - coverage.low) / span * MAP_WIDTH
        parts.append(
            format_html(
                '<line class="resume" x1="{}" x2="{}" y1="0" y2="{}" stroke="#000" '
                'stroke-width="1.5"><title>resume at {}</title></line>',
                f"{x:.1f}",
                f"{x:.1f}",
                MAP_HEIGHT,
                f"{point:,}",
            )
        )
    return mark_safe(  # noqa: S308  (every part is escaped above)
        f'<svg class="coverage" role="img" aria-label="coverage of {escape(label)}" '
        f'data-bins="{escape(",".join(coverage.bins))}" '
        f'data-resume="{escape(",".join(str(p) for p in coverage.resume_points))}" '
        f'viewBox="0 0 {MAP_WIDTH} {MAP_HEIGHT}" width="{MAP_WIDTH}" height="{MAP_HEIGHT}" '
        f'preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )


def hourly_svg(
    hours: Sequence[tuple[datetime, int]], width: int = 720, height: int = 160
) -> SafeString:
    """Headers per hour as bars, the newest hour on the right."""
    top = max((value for _, value in hours), default=0) or 1
    plot = height - 20
    bar = width / max(len(hours), 1)
    parts = [
        format_html('<text x="2" y="10" font-size="10" fill="#555">{} headers/h</text>', f"{top:,}")
    ]
    for index, (hour, value) in enumerate(hours):
        h = plot * value / top
        parts.append(
            format_html(
                '<rect x="{}" y="{}" width="{}" height="{}" fill="#1565c0">'
                "<title>{}:00 UTC: {} headers</title></rect>",
                f"{index * bar + 1:.1f}",
                f"{plot - h + 12:.1f}",
                f"{bar - 2:.1f}",
                f"{h:.1f}",
                f"{hour:%H}",
                f"{value:,}",
            )
        )
        if index % 3 == 0:
            parts.append(
                format_html(
                    '<text x="{}" y="{}" font-size="9" fill="#555">{}h</text>',
                    f"{index * bar + 1:.1f}",
                    height - 1,
                    f"{hour:%H}",
                )
            )
    return mark_safe(  # noqa: S308  (every part is escaped above)
        f'<svg class="hourly" role="img" aria-label="headers per hour" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(parts)}</svg>"
    )
