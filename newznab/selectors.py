"""Reads of the newznab API: release searches, one release, a release's NZB as a stream.

A search with words picks one of two plans (docs/newznab.md, "Search"):
common words are found by walking the newest releases down the date index
with a bounded row budget; when that cannot fill the page the words are
rare, and the GIN index gives every match, sorted by date after. Totals are
capped (TOTAL_CAP), as NNTmux caps them: counting a word in millions of
releases would cost more than the search.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from indexer.catalog.models import CatalogFile
from indexer.catalog.nzb import NZB_TAIL, NzbFile, nzb_file, nzb_head
from indexer.catalog.selectors import files_with_segments
from indexer.sql import Record, slices

from .errors import NoSuchItem
from .sql import queries

# Rows the date-ordered walk may read at most (words rarer than page/this
# go to the GIN plan), and at least.
WALK_MAX_ROWS = 30_000
WALK_MIN_ROWS = 2_000
# How long a process trusts the word frequencies it read (ANALYZE refreshes them).
TERM_STATS_SECONDS = 300.0
# The most a total counts ("at least 1000" past it).
TOTAL_CAP = 1_000
# Files of a release read (with their segment arrays) at a time while an NZB streams.
NZB_FILES_AT_ONCE = 50
# The earliest date, for "no maxage" (a parameter of the same type keeps one plan).
BEGINNING = datetime.fromisoformat("1970-01-01T00:00:00+00:00")

# The separators newznab_words() turns into spaces, then the words as the
# 'simple' parser cuts them.
_SEPARATORS = str.maketrans("._-+()[]{}", " " * 10)
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.translate(_SEPARATORS).lower())


@dataclass(frozen=True, slots=True)
class Episode:
    """tvsearch's season and episode: S01E02 or 1x02, a season alone (S01…), or a
    daily show's date (season=2024, ep=01/15)."""

    season: int
    episode: str = ""

    def clause(self) -> str:
        if self.season >= 1000:  # a year: daily shows are named by date
            return " & ".join(f"'{w}'" for w in [str(self.season), *words_of(self.episode)])
        if not self.episode:
            return f"'s{self.season:02d}':*"
        ep = int(self.episode)
        return f"('s{self.season:02d}e{ep:02d}' | '{self.season}x{ep:02d}')"


@dataclass(frozen=True, slots=True)
class SearchQuery:
    words: str = ""
    episode: Episode | None = None
    categories: Sequence[int] | None = None
    groups: Sequence[str] = ()
    since: datetime = BEGINNING
    limit: int = 100
    offset: int = 0

    def tsquery(self) -> str:
        clauses = [f"'{word}'" for word in words_of(self.words)]
        if self.episode is not None:
            clauses.append(self.episode.clause())
        return " & ".join(clauses)

    def required_terms(self) -> list[list[str]]:
        """Each must match (AND): the words, and the episode's alternatives (OR); a
        term ending in "*" is a prefix (a season alone)."""
        terms = [[word] for word in words_of(self.words)]
        episode = self.episode
        if episode is not None and episode.season < 1000:
            season = episode.season
            if episode.episode:
                ep = int(episode.episode)
                terms.append([f"s{season:02d}e{ep:02d}", f"{season}x{ep:02d}"])
            else:
                terms.append([f"s{season:02d}*"])
        return terms


@dataclass(frozen=True, slots=True)
class SearchPage:
    offset: int
    total: int
    releases: list[Record] = field(default_factory=list)
    plan: str = ""  # walk, matches or newest (the bench reports it)


def _params(query: SearchQuery, tsquery: str = "") -> dict[str, object]:
    return {
        "tsquery": tsquery,
        "since": query.since,
        "categories": list(query.categories) if query.categories else None,
        "groups": list(query.groups),
        "limit": query.limit,
        "offset": query.offset,
        "budget": WALK_MAX_ROWS,
        "total_cap": TOTAL_CAP,
    }


@dataclass(frozen=True, slots=True)
class TermStats:
    frequencies: dict[str, float]
    floor: float  # a word not listed is rarer than this
    releases: int
    posted_bounds: list[datetime]  # the posted dates' histogram, oldest first
    read_at: float

    def frequency(self, alternatives: list[str]) -> float:
        """The share of releases holding one of these terms (a prefix: every listed
        word it begins); a word not listed counts as the least common listed."""
        total = 0.0
        for term in alternatives:
            if term.endswith("*"):
                stem = term[:-1]
                listed = [f for word, f in self.frequencies.items() if word.startswith(stem)]
                total += sum(listed) if listed else self.floor
            else:
                total += self.frequencies.get(term, self.floor)
        return min(1.0, total)

    def estimate(self, required: list[list[str]]) -> float:
        """The share holding every required term: between the product (independent
        words) and the rarest one's share (words of one title go together)."""
        if not required:
            return 1.0
        shares = [self.frequency(alternatives) for alternatives in required]
        return math.sqrt(min(shares) * math.prod(shares))

    def posted_after(self, share: float) -> datetime | None:
        """About when the newest `share` of the releases begins; None for all of them."""
        buckets = len(self.posted_bounds) - 1
        if share >= 1.0 or buckets < 1:
            return None
        return self.posted_bounds[max(0, int((1.0 - share) * buckets))]


_term_stats: TermStats | None = None


def term_stats() -> TermStats | None:
    """The words' frequencies and the dates' histogram from the table's statistics,
    read at most every TERM_STATS_SECONDS; None before the table was ever analyzed."""
    global _term_stats
    if _term_stats is None or time.monotonic() - _term_stats.read_at > TERM_STATS_SECONDS:
        row = queries.fetchone("search_term_stats", {})
        if row is None or not row.terms:
            return None
        freqs = list(row.freqs)
        _term_stats = TermStats(
            frequencies=dict(zip(row.terms, freqs, strict=False)),
            floor=freqs[-3],
            releases=row.releases,
            posted_bounds=list(row.posted_bounds or []),
            read_at=time.monotonic(),
        )
    return _term_stats


def search(query: SearchQuery) -> SearchPage:
    """Common words: the date-ordered walk. Others (or a walk that ran out of rows): the
    GIN bitmap ANDed with a window of the newest releases (BRIN on posted) big enough
    to hold the page by the words' frequency, widened tenfold until the page is full."""
    tsquery = query.tsquery()
    if not tsquery:
        return newest(query)
    params = _params(query, tsquery)
    stats = term_stats()
    wanted = query.offset + query.limit + 1
    frequency = (
        min((stats.frequency(alt) for alt in query.required_terms()), default=1.0) if stats else 1.0
    )
    walk_rows = wanted / max(frequency, 1e-9)
    if stats is None or walk_rows <= WALK_MAX_ROWS:
        budget = WALK_MIN_ROWS if stats is None else int(max(WALK_MIN_ROWS, 3 * walk_rows))
        walk = "search_walk_in_categories" if query.categories else "search_walk"
        rows = queries.fetchall_planned(
            walk, {**params, "limit": query.limit + 1, "budget": budget}
        )
        if len(rows) > query.limit:
            # More than a page among the newest: a common term; its total is not counted.
            return SearchPage(query.offset, TOTAL_CAP, rows[: query.limit], "walk")
    share = 3 * walk_rows / stats.releases if stats and stats.releases else 1.0
    return _newest_window(query, params, stats, share)


def _newest_window(
    query: SearchQuery, params: dict[str, object], stats: TermStats | None, share: float
) -> SearchPage:
    windows = 0
    while True:
        after = stats.posted_after(share) if stats else None
        since = max(query.since, after) if after is not None else query.since
        rows = queries.fetchall_planned("search_matches", {**params, "since": since})
        windows += 1
        if len(rows) >= query.limit and after is not None and since > query.since:
            # The page is full within the window; more may be older: a capped total.
            return SearchPage(query.offset, TOTAL_CAP, rows, f"window x{windows}")
        if after is None or since <= query.since:
            break
        share *= 10
    if rows:
        total = rows[0].total
    else:
        counted = queries.fetchall_planned("count_matches", params)[0]
        total = counted.total if counted else 0
    return SearchPage(query.offset, total, rows, f"bitmap x{windows}")


def forget_term_stats() -> None:
    global _term_stats
    _term_stats = None


def newest(query: SearchQuery) -> SearchPage:
    params = _params(query)
    rows = queries.fetchall("newest_releases", params)
    if query.offset == 0 and len(rows) < query.limit:
        total = len(rows)
    else:
        counted = queries.fetchone("count_newest", params)
        total = counted.total if counted else 0
    return SearchPage(query.offset, total, rows, "newest")


def release(release_id: int) -> Record:
    row = queries.fetchone("release_by_id", {"id": release_id})
    if row is None:
        raise NoSuchItem(f"No such item ({release_id})")
    return row


@dataclass(frozen=True, slots=True)
class PostedFile:
    """One posted file of a release: its catalog files (one per group it went to)."""

    subject: str
    file_ids: list[int]
    groups: list[str]


def posted_files(release_id: int) -> list[PostedFile]:
    out: dict[str, PostedFile] = {}
    for row in queries.fetchall("release_files", {"release_id": release_id}):
        posted = out.setdefault(row.subject, PostedFile(row.subject, [], []))
        posted.file_ids.append(row.id)
        posted.groups.append(row.group_name)
    return list(out.values())


def release_nzb(release_id: int) -> tuple[Iterator[bytes], str]:
    """The release's NZB as chunks (a few files' segments in memory at a time) and its name.

    Raises NoSuchItem before the first chunk when the release does not exist
    or has no files left.
    """
    found = release(release_id)
    files = posted_files(release_id)
    if not files:
        raise NoSuchItem(f"No such item ({release_id}: no files)")
    return _nzb_chunks(found.name, files), found.name


def _merged(posted: PostedFile, stored: dict[int, CatalogFile]) -> NzbFile | None:
    """One <file> of a posted file: its groups, the union of its segments by part."""
    copies = [stored[i] for i in posted.file_ids if i in stored]
    if not copies:  # pruned while the NZB streams
        return None
    segments: dict[int, tuple[int, str, int]] = {}
    for copy in copies:
        for part, message_id, size in zip(copy.parts, copy.message_ids, copy.sizes, strict=True):
            segments.setdefault(part, (part, message_id, size))
    return NzbFile(
        subject=posted.subject,
        poster=copies[0].poster,
        date=int(min(c.date for c in copies).timestamp()),
        groups=sorted(set(posted.groups)),
        segments=list(segments.values()),
    )


def _nzb_chunks(title: str, files: list[PostedFile]) -> Iterator[bytes]:
    yield nzb_head(title).encode("utf-8")
    for some in slices(files, NZB_FILES_AT_ONCE):
        ids = [file_id for posted in some for file_id in posted.file_ids]
        stored = {f.id: f for f in files_with_segments(ids)}
        for posted in some:
            item = _merged(posted, stored)
            if item is not None:
                yield nzb_file(item).encode("utf-8")
    yield NZB_TAIL.encode("utf-8")
