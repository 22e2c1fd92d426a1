"""Builds overview lines the way a news server sends them, for the agent-core tests."""

from __future__ import annotations

DATE = "Tue, 14 Nov 2023 22:13:20 +0000"  # 1700000000
POSTER = "someone <a@b.c>"


def over_line(
    article: int,
    subject: str,
    *,
    poster: str = POSTER,
    date: str = DATE,
    message_id: str | None = None,
    size: int = 739811,
) -> bytes:
    message_id = message_id or f"<part{article}@host>"
    fields = [str(article), subject, poster, date, message_id, "", str(size), "5000"]
    fields.append(f"Xref: news.example.com alt.binaries.test:{article}")
    return "\t".join(fields).encode("utf-8") + b"\r\n"
