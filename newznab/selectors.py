"""Reads of the newznab API: release searches, one release, a release's NZB as a stream.

A search with words picks a plan (docs/newznab.md, "Search"): common words
are found by walking the newest releases down the date index (a season pack
down the season index) with a bounded row budget; when that cannot fill the
page the words are rare, and the GIN index (with the season index for a
season) gives the matches in a window of the newest releases, widened until
the page is full, sorted by date after. Totals are
capped (TOTAL_CAP), as NNTmux caps them: counting a word in millions of
releases would cost more than the search.
"""

from __future__ import annotations

import bisect
import math
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from catalog import selectors as catalog
from core.errors import NotFound
from core.replicas import PRIMARY
from core.sql import Record
from usenet.release_names import title_key

from .errors import NoSuchItem
from .sql import queries

# Rows the date-ordered walk is expected to read at most (words rarer than
# page/this go to the GIN plan; it reads at most three times as many), and at
# least. The newest pages it reads are the ones every walk reads, mostly
# cached: 15,000 rows cost ≈ 6 ms where a window for a word in 1 % cost
# 36 to 250 ms (10 M releases).
WALK_MAX_ROWS = 15_000
# A season pack's words in more than this share of the releases are tested on
# the season index's rows in the window rather than looked up in the GIN
# index (measured at 10 M: a word in 1 % is faster from GIN, in 1.5 % not).
SEASON_WORD_SHARE = 0.012
# How much a newest window that did not fill the page grows at most: it grows
# to the share that should hold window_rows() by the matches it held (their
# count per release, measured), at least twofold; a window with none grows
# this much (the whole table, mostly). One step costs a GIN scan and the
# window's matches; grown by a fixed tenfold, a window read ten times the
# matches again, and one that held none took three steps to reach the whole
# table (a rare word in a category it is not in).
WIDEN_MAX = 1000.0
# A newest window is sized to hold the rows wanted (offset and page) this
# many times over, plus WINDOW_PAGES pages: three times a first page, 1.3
# times a page at offset 3,000 (its expected matches vary by far less than
# their number; a deep page's window read three times the rows it needed).
WINDOW_SLACK = 1.25
WINDOW_PAGES = 2
WALK_MIN_ROWS = 2_000
# What one row of the walk costs in entries of the GIN index (index_rows): at
# 10 M releases a walk read 130,000 rows in 325 ms (2.5 µs, 5.8 under load:
# the heap is not in date order, a page a row), the index 361,000 entries of
# "a" in 170 ms (0.5 µs). A walk past WALK_MAX_ROWS is chosen when it reads
# fewer rows than the window's GIN scan reads entries over this.
WALK_ROW_ENTRIES = 8
# Rows a season pack's walk down the season index is expected to read at most
# (a season's row is a heap page of its own, as a walk's row is; 20,000 of
# them cost less than the GIN bitmap of a word in 1 % and the window's rows).
SEASON_WALK_MAX_ROWS = 20_000
# Categories in less than this share of the releases together are listed
# newest first category by category (newest_in_categories), not by skipping
# the other categories' entries down the date index (≈ 1/share entries read a
# release: at 5 %, 20 index entries, cheap; at 0.05 %, 2,000).
RARE_CATEGORIES_SHARE = 0.05
# How long a process trusts the word frequencies it read (ANALYZE refreshes them).
TERM_STATS_SECONDS = 300.0
# The most a total counts ("at least 1000" past it).
TOTAL_CAP = 1_000
# The earliest date, for "no maxage" (a parameter of the same type keeps one plan).
BEGINNING = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
# A newest window of more weeks than this is asked of the words' index without
# its weeks (window_weeks): each week is one more scan of the index (times each
# category asked), and past a few months the weeks spare little of the table.
WINDOW_WEEKS_MAX = 26
# ...and only when the index's entries for the words (index_rows) are more than
# this share of the window's releases: the index then gives a common word's
# matches of those weeks alone (a word in 3 % at offset 4,600: 10,956 entries
# in 12 ms where its whole posting list, 331,718, took 130 ms), but reads the
# weeks' own entries to do so, which costs more than a rare word's few (a word
# in 0.02 % over 14 weeks: 65 ms with them, 45 without, at 10 M releases).
WEEKS_ENTRY_SHARE = 0.05
# A term in more than this share of the releases is asked of the words' index
# only while the candidates the others leave are many (index_terms).
COMMON_SHARE = 0.02
# The candidates (rows read from the heap and tested) the words' index may give
# before it is asked one more common term (index_terms): a heap row costs about 12 µs
# at 10 M releases, a common term asked of the index 6 to 30 ms.
INDEX_TERM_ROWS = 2_000
# What a candidate read from the heap and tested costs in entries of the words'
# index read for a category asked (index_categories): at 10 M releases, a
# window's 886 candidates in 10.9 ms (12 µs each); "murderbot" asked in seven
# categories, its bitmap 39 to 40 ms against 1.7 to 2.0 alone for its 11,743 entries
# (0.46 µs an entry and category).
HEAP_ROW_ENTRIES = 25
# What a candidate read from the heap and tested costs in releases a newest
# window's BRIN range covers (whole_table_pays): its bitmap took 35.8 ms for
# 9.26 M releases (3.9 ns each) at 10 M releases, a candidate 12 µs.
BRIN_ROWS_PER_HEAP_ROW = 3_000
_WEEK = timedelta(weeks=1)

# The separators newznab_words() turns into spaces, then the words as the
# 'simple' parser cuts them.
_SEPARATORS = str.maketrans("._-+()[]{}", " " * 10)
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.translate(_SEPARATORS).lower())


# newznab_title() in sql/schema.sql: the same letters made plain, in the same order.
_PLAIN = str.maketrans(
    "àáâãäåāăąçćčďèéêëēėęěìíîïīįłñńňòóôõöøōőřśšşťùúûüūůűųýÿźžż",
    "aaaaaaaaacccdeeeeeeeeiiiiiilnnnoooooooorssstuuuuuuuuyyzzz",
)


def title_match_key(title: str) -> str:
    """A title as the fields search compares it: newznab_title() (sql/schema.sql)
    of the title's title_key, as a release of that title stores it (a test holds
    the two equal). "The Office (US)", "Office US", "the.office.us" and "The
    Office" give one key; "" for no words."""
    key = " ".join(words_of(title_key(title)))
    if key.startswith("the "):
        key = key[4:]
    return (" " + key + " ").replace(" and ", " ").translate(_PLAIN).replace(" ", "")


@dataclass(frozen=True, slots=True)
class Fields:
    """What tvsearch and movie ask of the fields of a release's name: one of the
    titles (title_match_key), and each of the others given (None: any)."""

    titles: tuple[str, ...]
    year: int | None = None
    season: int | None = None
    episode: int | None = None
    absolute: int | None = None
    aired_from: date | None = None
    aired_until: date | None = None  # the day after the last
    # The season, or an air date in the range (a year as season: "S2014" or daily).
    season_or_aired: bool = False
    # Asked by an id inspection recorded (t=movie&imdbid=, t=tvsearch&tvdbid=):
    # the id's releases in place of the titles'.
    imdb_id: str | None = None
    tvdb_id: int | None = None

    @property
    def by_id(self) -> bool:
        return self.imdb_id is not None or self.tvdb_id is not None


@dataclass(frozen=True, slots=True)
class Episode:
    """tvsearch's season and episode: S01E02 or 1x02, a season alone (S01…), or a
    daily show's date (season=2024, ep=01/15)."""

    season: int
    episode: str = ""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    words: str = ""
    episode: Episode | None = None
    categories: Sequence[int] | None = None
    groups: Sequence[str] = ()
    since: datetime = BEGINNING
    limit: int = 100
    offset: int = 0
    # Asked of the fields first; the words (and episode) when they match nothing.
    fields: Fields | None = None
    # Serve releases that are not listed (incomplete ones) too.
    incomplete: bool = False
    # Serve passworded releases too (password=1; hidden by default).
    passworded: bool = False

    def tsquery(self) -> str:
        return render_tsquery(self.required_terms())

    def season_key(self) -> str | None:
        """A season pack's key in the season index ('s02'; migration 0004), or None."""
        episode = self.episode
        if episode is None or episode.episode or not 0 <= episode.season < 100:
            return None
        return f"s{episode.season:02d}"

    def required_terms(self) -> list[list[str]]:
        """Each must match (AND): the words, and the episode's alternatives (OR); a
        term ending in "*" is a prefix (a season alone matches S02, S02E01...)."""
        return self.word_terms() + self.episode_terms()

    def word_terms(self) -> list[list[str]]:
        return [[word] for word in words_of(self.words)]

    def episode_terms(self) -> list[list[str]]:
        """The episode's terms (required_terms after the words)."""
        episode = self.episode
        if episode is None:
            return []
        if episode.season >= 1000:  # a year: daily shows are named by date
            return [[str(episode.season)]] + [[w] for w in words_of(episode.episode)]
        if not episode.episode:
            return [[f"s{episode.season:02d}*"]]
        ep = int(episode.episode)
        return [[f"s{episode.season:02d}e{ep:02d}", f"{episode.season}x{ep:02d}"]]


def render_tsquery(required: list[list[str]]) -> str:
    """`'a' & ('s01e02' | '1x02') & 's02':*` (words are letters and digits only)."""
    clauses = []
    for alternatives in required:
        parts = [f"'{t[:-1]}':*" if t.endswith("*") else f"'{t}'" for t in alternatives]
        clauses.append(parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")")
    return " & ".join(clauses)


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
        "weeks": None,
        "season": query.season_key(),
        "incomplete": query.incomplete,
        "passworded": query.passworded,
    }


@dataclass(frozen=True, slots=True)
class TermStats:
    frequencies: dict[str, float]
    floor: float  # a word not listed is rarer than this
    releases: int
    posted_bounds: list[datetime]  # the posted dates' histogram, oldest first
    category_shares: dict[int, float]
    read_at: float

    def share_of(self, categories: Sequence[int] | None) -> float:
        """The share of releases in these categories (one not listed: 1 %)."""
        if not categories:
            return 1.0
        return min(1.0, max(0.01, sum(self.category_shares.get(c, 0.01) for c in categories)))

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
        """The share holding every required term, as if the terms were independent
        (the product): the fewest matches they can be expected to have, what the
        walk is chosen by (it runs only where it should fill the page)."""
        return math.prod(self.frequency(alternatives) for alternatives in required)

    def together(self, words: list[list[str]], others: list[list[str]]) -> float:
        """The share holding every term, words of one title taken together: "a
        movie name" is in far more releases than the product of the shares of
        "a", "movie" and "name" (1 in 2,000 for 1 in 200,000), and a window
        sized by the product was the whole table, every match of the title read.
        The words back off exponentially (the rarest share, times the square root
        of the next, the fourth root of the third...: between independent and
        one word); `others` (a season, an episode: not tied to the title) are
        independent of them. A window sized by it is widened by the matches it
        held when they were fewer (_newest_window)."""
        shares = sorted(self.frequency(alternatives) for alternatives in words)
        backed_off = math.prod(share ** (0.5**rank) for rank, share in enumerate(shares))
        return backed_off * self.estimate(others)

    def share_after(self, when: datetime) -> float:
        """The share of the releases posted after `when` (posted_after's inverse)."""
        bounds = self.posted_bounds
        buckets = len(bounds) - 1
        if buckets < 1 or when <= bounds[0]:
            return 1.0
        if when >= bounds[-1]:
            return 0.0
        below = bisect.bisect_right(bounds, when) - 1
        position = below + (when - bounds[below]) / (bounds[below + 1] - bounds[below])
        return 1.0 - position / buckets

    def posted_after(self, share: float) -> datetime | None:
        """About when the newest `share` of the releases begins; None for all of them.
        Between two bounds of the histogram, in proportion: rounded down to a bound,
        a window held the releases of one more bucket (1 % of the table at least,
        100,000 releases at 10 M, and 10 % for a share of 9.1 %)."""
        bounds = self.posted_bounds
        buckets = len(bounds) - 1
        if share >= 1.0 or buckets < 1:
            return None
        position = max(0.0, (1.0 - share) * buckets)
        below = min(int(position), buckets - 1)
        return bounds[below] + (bounds[below + 1] - bounds[below]) * (position - below)


_term_stats: TermStats | None = None


def term_stats() -> TermStats | None:
    """The words' frequencies and the dates' histogram from the table's statistics,
    read at most every TERM_STATS_SECONDS; None before the table was ever analyzed."""
    global _term_stats
    if _term_stats is None or time.monotonic() - _term_stats.read_at > TERM_STATS_SECONDS:
        row = queries.fetchone("search_term_stats", {})
        freqs = list(row.freqs or []) if row is not None else []
        _term_stats = TermStats(
            frequencies=dict(zip(row.terms, freqs, strict=False)) if row and row.terms else {},
            floor=freqs[-3] if len(freqs) >= 3 else 0.0,
            releases=row.releases if row is not None else 0,
            posted_bounds=list(row.posted_bounds or []) if row is not None else [],
            category_shares=(
                dict(zip(row.categories, row.category_shares, strict=False))
                if row is not None and row.categories
                else {}
            ),
            read_at=time.monotonic(),
        )
    # Not analyzed yet (remembered too, so a new catalog does not ask every time).
    return _term_stats if _term_stats.frequencies else None


def index_tsquery(query: SearchQuery, stats: TermStats | None, window: float = 1.0) -> str:
    """What the GIN index is asked for a window of this share of the releases:
    the plain terms (index_terms), never the prefixes (a season alone), whose
    many entries it would have to merge into a bitmap (the season index stands
    in for them); for a season pack of common words, nothing ("": the season
    index alone). The stored tsvector of each candidate is tested for the whole
    query."""
    required = query.required_terms()
    if stats is None or not required:
        return query.tsquery()
    plain = [alt for alt in required if not any(t.endswith("*") for t in alt)]
    if query.season_key() is not None and all(
        stats.frequency(alt) >= SEASON_WORD_SHARE for alt in plain
    ):
        # A season pack of common words: the season index alone. A word in more
        # than SEASON_WORD_SHARE costs more to read from the GIN index (an entry
        # per release of the whole table) than testing it on the window's rows
        # of the season (about three pages' worth of matches over its share).
        return ""
    return render_tsquery(index_terms(plain, stats, window))


def index_terms(plain: list[list[str]], stats: TermStats, window: float) -> list[list[str]]:
    """The terms the GIN index is asked: every uncommon one (under COMMON_SHARE;
    their posting lists are short, and the words of a title are rare together
    only when all are asked: "soap & opera" gave 11,843 rows, with "montisran"
    38), then the common ones, most selective first, while the candidates left
    in the window could be more than INDEX_TERM_ROWS, each then a heap row read
    and tested. The candidates are bounded by the rarest uncommon term's share
    (the uncommon words of one title are not independent: as if they were,
    "soap & opera" would be 28 rows), and each common term asked multiplies the
    bound by its share (a common word such as "720p" or "the" is about as
    frequent among a title's releases as among all). A common term asked of the
    index is read at each candidate of the others: for 37 candidates, "title",
    "series" and "the" cost 1,697 index pages, 32 ms, at 10 M releases, where
    the 37 heap rows cost 0.5 ms; for the 29,823 candidates of "barmibar" (250 ms
    from the heap), "the" left 5,556: 34 to 63 ms in all."""
    ordered = sorted(plain, key=stats.frequency)
    asked = [alt for alt in ordered if stats.frequency(alt) < COMMON_SHARE]
    candidates = stats.releases * window * (stats.frequency(asked[0]) if asked else 1.0)
    for alternatives in ordered[len(asked) :]:
        if asked and candidates <= INDEX_TERM_ROWS:
            break
        asked.append(alternatives)
        candidates *= stats.frequency(alternatives)
    return asked


def whole_table_pays(stats: TermStats, window: float, candidates: float) -> bool:
    """Whether a newest window of this share of the releases is better searched as
    the whole table, given the candidates expected over the whole table (none
    known: every row): the BRIN range's bitmap costs each release it covers, and
    spares the heap rows of the candidates outside it. The first window of
    `q=title the italy series barmibar` began at 93 % of the table: its bitmap
    took 35.8 ms of the search's 65 for 36 matches, 30 ms as the whole table;
    the title bound's window of 32 % of `maria the virgin witch` spares 7,900 of
    its 11,922 candidates (95 ms) for 19 ms."""
    candidates = candidates or stats.releases
    return (1.0 - window) * candidates * BRIN_ROWS_PER_HEAP_ROW < window * stats.releases


def index_categories(
    query: SearchQuery, stats: TermStats | None, window: float
) -> list[int] | None:
    """The categories the words' index is asked with the words (None: tested on
    the candidates instead). Each category asked is one more scan of the index,
    reading a leaf page of that category's entries at each candidate of the
    words, where a candidate outside the categories costs a heap row: asked when
    the window's candidates ruled out save more than that (a rare word in the
    wrong categories over the whole table), not otherwise ("murderbot 720p" in
    TV's seven categories, a window of 7 %: 99.6 ms in the index against 13 ms
    for the words alone and their rows, 10 M releases)."""
    if not query.categories:
        return None
    categories = list(query.categories)
    if stats is None:
        return categories
    ruled_out = window * (1.0 - stats.share_of(categories))
    return categories if ruled_out * HEAP_ROW_ENTRIES > len(categories) else None


def search(query: SearchQuery, *, using: str = PRIMARY) -> SearchPage:
    """The fields' search when the query has a title; the words' when it has none or
    the fields match nothing (a query that is not a title: "show 720p"). `using`: the
    database alias, the replica's where lag is tolerated (core/replicas.py)."""
    if query.fields is not None and query.fields.by_id:
        return search_fields(query, query.fields, using=using)  # an id's releases, or none
    if query.fields is not None and any(query.fields.titles):
        page = search_fields(query, query.fields, using=using)
        if page.total or not query.tsquery():
            return page
    return search_words(query, using=using)


def search_fields(query: SearchQuery, fields: Fields, *, using: str = PRIMARY) -> SearchPage:
    params = {
        **_params(query),
        "titles": [title for title in fields.titles if title],
        "year": fields.year,
        "season": fields.season,
        "episode": fields.episode,
        "absolute": fields.absolute,
        "aired_from": fields.aired_from,
        "aired_until": fields.aired_until,
        "season_or_aired": fields.season_or_aired,
        "by_id": fields.by_id,
        "imdb_id": fields.imdb_id,
        "tvdb_id": fields.tvdb_id,
    }
    rows = queries.fetchall_planned("search_fields", params, using=using)
    if query.offset == 0 and len(rows) < query.limit:
        return SearchPage(query.offset, len(rows), rows, "fields")
    # Planned for its values too: a prepared generic plan cannot fold the NULL tests
    # away, and scanned the whole table (seconds at 1 M releases).
    [counted] = queries.fetchall_planned("count_fields", params, using=using)
    return SearchPage(query.offset, counted.total, rows, "fields")


def search_words(query: SearchQuery, *, using: str = PRIMARY) -> SearchPage:
    """Common words: the date-ordered walk (a season pack: down the season index).
    Others (or a walk that ran out of rows): the GIN bitmap (and the season index's)
    ANDed with a window of the newest releases (BRIN on posted) big enough to hold
    the page by the terms' estimate, widened by the matches it held until the
    page is full."""
    tsquery = query.tsquery()
    if not tsquery:
        return newest(query, using=using)
    stats = term_stats()
    params = _params(query, tsquery)
    wanted = query.offset + query.limit + 1
    required = query.required_terms()
    # The share of the releases that match, if the terms were independent (the
    # fewest to expect: a walk that runs out of rows was wasted), and the rows a
    # walk reads to find the page: within the categories when given (the walk
    # then reads only theirs; a season's terms are in TV alone).
    independent = stats.estimate(required) if stats else 1.0
    in_categories = stats.share_of(query.categories) if stats else 1.0
    walk_rows = wanted * min(1.0, in_categories) / max(independent, 1e-9)
    longest = max(WALK_MAX_ROWS, index_rows(query, stats) / WALK_ROW_ENTRIES) if stats else 0
    if stats is None or walk_rows <= longest:
        budget = WALK_MIN_ROWS if stats is None else int(max(WALK_MIN_ROWS, 3 * walk_rows))
        rows = queries.fetchall_planned(
            "search_walk", {**params, "limit": query.limit + 1, "budget": budget}, using=using
        )
        if len(rows) > query.limit:
            # More than a page among the newest: a common term; its total is not counted.
            return SearchPage(query.offset, TOTAL_CAP, rows[: query.limit], "walk")
    # The window holds the rows wanted and two pages more (window_rows) by the
    # terms' share with a title's words together; the categories thin the
    # matches of words, not of a season or episode (those are TV's alone).
    thinned = in_categories if query.episode is None else 1.0
    season = query.season_key()
    plain = [alt for alt in required if not any(t.endswith("*") for t in alt)]
    season_rows = (
        wanted / max(math.prod(stats.frequency(alt) for alt in plain), 1e-9) if stats else 0
    )
    if season is not None and stats is not None and season_rows <= SEASON_WALK_MAX_ROWS:
        # A season pack: the season's rows by date, the words tested on each.
        rows = queries.fetchall_planned(
            "search_season_walk",
            {**params, "limit": query.limit + 1, "budget": int(3 * season_rows)},
            using=using,
        )
        if len(rows) > query.limit:
            return SearchPage(query.offset, TOTAL_CAP, rows[: query.limit], "season walk")
    matching = stats.together(query.word_terms(), query.episode_terms()) if stats else 1.0
    share = (
        window_rows(query) / max(matching, 1e-9) / stats.releases / thinned
        if stats and stats.releases
        else 1.0
    )
    bound = title_bound(query, using) if stats else None
    if bound is not None and stats is not None and stats.share_after(bound) < share:
        # The words are a title with a page of its own releases since `bound`: the
        # window from there holds the page, whatever the words' shares say (its
        # share, for a window that grows: a release's at least).
        held = max(stats.share_after(bound), 1.0 / max(stats.releases, 1))
        return _newest_window(query, params, stats, held, using, bound)
    return _newest_window(query, params, stats, share, using)


def title_bound(query: SearchQuery, using: str = PRIMARY) -> datetime | None:
    """When the words are a title (q=the office) with at least the rows wanted among
    its listed releases (in the categories asked): the posted date of the oldest
    of those, newest first (migration 0009); None otherwise. Each such release
    usually holds every word, so the newest window from that date holds the page.
    The words of a title are each common and rare together, which the words'
    statistics cannot tell from unrelated words: at 10 M releases a window sized
    by them was the whole table, a popular title's 12,000 matches read from the
    heap (1 s). When the title's releases lack a word asked ("the office" and
    "Office.S01E01"), the window holds fewer and grows as any window does."""
    if query.episode is not None:
        return None
    title = title_match_key(query.words)
    if not title:
        return None
    rows = queries.fetchall_planned(
        "title_bound",
        {
            "title": title,
            "since": query.since,
            "categories": list(query.categories) if query.categories else None,
            "wanted": query.offset + query.limit + 1,
        },
        using=using,
    )
    return rows[0].posted if rows else None


def index_rows(query: SearchQuery, stats: TermStats) -> float:
    """The GIN index's entries a newest window reads at least: the posting list of
    the rarest plain term, whatever the window (0 for a season pack: its own plans).
    A walked row costs about WALK_ROW_ENTRIES entries, so a walk of fewer rows
    than that share of them is the cheaper plan: a word in 15 % at offset 3,000
    walks 21,000 rows where its window read 1.5 million entries (1-2 s)."""
    plain = [alt for alt in query.required_terms() if not any(t.endswith("*") for t in alt)]
    if query.season_key() is not None or not plain:
        return 0.0
    return stats.releases * min(stats.frequency(alt) for alt in plain)


def window_rows(query: SearchQuery) -> float:
    """The matches a newest window is sized to hold (WINDOW_SLACK, WINDOW_PAGES)."""
    return WINDOW_SLACK * (query.offset + query.limit + 1) + WINDOW_PAGES * (query.limit + 1)


def _newest_window(
    query: SearchQuery,
    params: dict[str, object],
    stats: TermStats | None,
    share: float,
    using: str,
    first: datetime | None = None,
) -> SearchPage:
    """The matches in the newest window, from `first` or the newest `share` of the
    releases, grown until the page is full or the window is the whole table."""
    windows = 0
    while True:
        bounded = first is not None
        after = first if bounded else stats.posted_after(share) if stats else None
        first = None
        if after is not None and stats is not None:
            # The candidates over the whole table: as the estimate that sized the
            # window expects (a window holds window_rows of them); for a title's
            # own window or a season pack, at most the rarest asked term's.
            expected = (
                index_rows(query, stats)
                if bounded or query.season_key() is not None
                else window_rows(query) / max(share, 1e-9)
            )
            if whole_table_pays(stats, stats.share_after(after), expected):
                after = None
        since = max(query.since, after) if after is not None else query.since
        window = stats.share_after(since) if stats is not None else 1.0
        entries = index_rows(query, stats) if stats is not None else 0.0
        releases = window * stats.releases if stats is not None else 0.0
        weeks = window_weeks(since, using) if entries > WEEKS_ENTRY_SHARE * releases else None
        asked = {
            **params,
            "since": since,
            "index_tsquery": index_tsquery(query, stats, window),
            "index_categories": index_categories(query, stats, window),
        }
        found = queries.fetchall_planned("search_matches", {**asked, "weeks": weeks}, using=using)
        if weeks is not None and not weeks_hold_newest(weeks, using):
            # A release dated past the weeks came in after they were looked up (a post
            # dated ahead), and the search saw it: the window again without them.
            found = queries.fetchall_planned(
                "search_matches", {**asked, "weeks": None}, using=using
            )
        rows = [row for row in found if row.id is not None]
        windows += 1
        if len(rows) >= query.limit and after is not None and since > query.since:
            # The page is full within the window; more may be older: a capped total.
            return SearchPage(query.offset, TOTAL_CAP, rows, f"window x{windows}")
        if after is None or since <= query.since:
            break
        # Grown by the matches it held (found[0].total: every one, up to TOTAL_CAP).
        held = found[0].total
        share *= min(WIDEN_MAX, max(2.0, window_rows(query) / held)) if held else WIDEN_MAX
    return SearchPage(query.offset, found[0].total, rows, f"bitmap x{windows}")


def week_of(when: datetime) -> int:
    """newznab_week() in sql/schema.sql: whole weeks since 1970-01-01 (a test
    holds the two equal)."""
    return (when - BEGINNING) // _WEEK


def window_weeks(since: datetime, using: str = PRIMARY) -> list[int] | None:
    """The weeks a window of the releases posted since `since` spans, from its
    first to the newest release's or the next one (a release posted while the
    search runs), which the words' index (migration 0010) is asked with the
    words: it then skips every other week's rows, where a common word's whole
    posting list was read (330,000 entries for a word in 3 %, 0.3 s at 10 M
    releases). None (every week) for the whole table or more than
    WINDOW_WEEKS_MAX weeks (a release dated far ahead makes every window that
    long: then as without the weeks, slower, never wrong)."""
    if since <= BEGINNING:
        return None
    row = queries.fetchone("newest_posted", {}, using=using)
    newest = row.posted if row is not None and row.posted is not None else since
    last = max(week_of(newest), week_of(datetime.now(UTC))) + 1
    first = week_of(since)
    if last - first >= WINDOW_WEEKS_MAX:
        return None
    return list(range(first, last + 1))


def weeks_hold_newest(weeks: list[int], using: str = PRIMARY) -> bool:
    """Whether the newest release, looked up after a search asked `weeks`, is in
    them: then so was every release that search saw (each was posted no later,
    unless it has gone since); else a release dated ahead came in between the
    weeks' lookup and the search, and the search may have left it out."""
    row = queries.fetchone("newest_posted", {}, using=using)
    return row is None or row.posted is None or week_of(row.posted) <= weeks[-1]


def forget_term_stats() -> None:
    global _term_stats
    _term_stats = None


def newest(query: SearchQuery, *, using: str = PRIMARY) -> SearchPage:
    """The newest releases (a search with no words, the feed); `using`: the database alias,
    the replica's where lag is tolerated (core/replicas.py)."""
    params = _params(query)
    stats = term_stats()
    rare = (
        query.categories is not None
        and stats is not None
        and stats.share_of(query.categories) < RARE_CATEGORIES_SHARE
    )
    # Planned for their values (fetchall_planned): see newest_releases.
    statement = "newest_in_categories" if rare else "newest_releases"
    rows = queries.fetchall_planned(statement, params, using=using)
    if query.offset == 0 and len(rows) < query.limit:
        total = len(rows)
    else:
        [counted] = queries.fetchall_planned("count_newest", params, using=using)
        total = counted.total
    return SearchPage(query.offset, total, rows, "newest by category" if rare else "newest")


@dataclass(frozen=True, slots=True)
class IdsCarried:
    imdb: bool
    tvdb: bool


def ids_carried() -> IdsCarried:
    """Whether any release carries an IMDb or a TVDB id (caps offers an id only then)."""
    row = queries.fetchone("ids_carried", {})
    return IdsCarried(bool(row and row.imdb), bool(row and row.tvdb))


_installation: uuid.UUID | None = None


def installation() -> uuid.UUID:
    """This installation's identity (newznab/guids.py), read once per process: it
    never changes."""
    global _installation
    if _installation is None:
        row = queries.fetchone("installation_identity", {})
        assert row is not None, "newznab migration 0005 stores the installation's identity"
        _installation = row.identity
    return _installation


def release(release_id: int) -> Record:
    row = queries.fetchone("release_by_id", {"id": release_id})
    if row is None:
        raise NoSuchItem(f"No such item ({release_id})")
    return row


def release_nzb(release_id: int) -> tuple[Iterator[bytes], str]:
    """The release's NZB as chunks (the catalog's stream: a few files' segments in
    memory at a time, a cross-posted file once with all its groups) and its name."""
    try:
        return catalog.release_nzb_stream(release_id)
    except NotFound as error:
        raise NoSuchItem(f"No such item ({release_id})") from error
