"""The release-name corpus and its scoring, shared by bench/bench_names.py and
tests/usenet/test_release_corpus.py (issue 25, "Measure"): one place decides
what "right" means, so the bench's table and the goal tests agree.

The corpus (tests/usenet/data/release_names.json, built by
bench/corpus/extract.py) holds real names with what Sonarr and Radarr read
from them. A row gives a field only where its fixture states it, and each
measure counts only the rows that state its field:

- top level: every row. The category's thousand (5000 TV, 2000 Movies, ...)
  equals the row's `top_level`.
- category: rows with `category`. The newznab id equals it, or one of
  `category_also` (5070 beside the quality's id for a fansub-shaped TV name).
- episode: rows stating a season, episodes, absolute numbers or an air date.
  Every one of them the row states is read right: the season (the first of
  the parsed seasons), the episode numbers (as a sorted tuple), the absolute
  numbers, the air date, and for a season pack (`full_season`) the pack flag.
  `episodes_or_absolute` (the held-out corpus: an episode its source states
  without a season) is right if the parsed episodes or the absolute numbers
  equal it.
- year: rows with `year`. The parsed year equals it.
- resolution: rows with `resolution`, compared by class: 2160, 1080, 720, or
  "sd" for anything below 720 and for none at all (an SD quality's name often
  states no resolution).
- tvsearch: TV rows stating a title, a season and episodes. A Sonarr-style
  `t=tvsearch` finds the release: its cleaned title (`title_key` of the
  row's title) is the name's `title_key`, the season is one of its seasons,
  every episode one of its episodes, and its category one Sonarr asks for
  (5030, 5040, 5045, 5070). The issue's fifth goal.

Rows marked `kind_conflict` (plain TV names in Radarr's fixtures) are scored
in a group of their own and left out of the totals the goals are set on.

The held-out corpus (HOLDOUT, tests/usenet/data/release_names_holdout.json,
built by bench/corpus/extract_holdout.py from other parsers' tests) has the
same format and is scored by the same code: `score(corpus=HOLDOUT)`.

The category of a parsed name comes from `usenet.categories.category_from_fields`
(a ParsedName in, a newznab id out) once it exists; until then from the
category rules every release gets today (DEFAULT_CATEGORY_RULES), which is
also the baseline `old_category`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from usenet import categories
from usenet.release_names import ParsedName, parse_release_name, title_key

DATA = Path(__file__).resolve().parents[1] / "usenet" / "data" / "release_names.json"
# The held-out corpus: other parsers' test names (bench/corpus/extract_holdout.py).
HOLDOUT = DATA.with_name("release_names_holdout.json")
MEASURES = ("category", "top_level", "episode", "year", "resolution", "tvsearch")
# The categories Sonarr's search asks for (issue 25: its defaults plus 5045 and 5070).
TV_SEARCH_CATEGORIES = frozenset((5030, 5040, 5045, 5070))

# The goals, over the totals (kind conflicts left out).
GOALS = {"top_level": 0.98, "category": 0.95, "episode": 0.97, "year": 0.97, "tvsearch": 0.95}

Row = dict[str, Any]


@cache
def load(path: Path = DATA) -> dict[str, Any]:
    """A corpus file as written by bench/corpus/extract.py (or extract_holdout.py)."""
    return json.loads(path.read_text())


@cache
def _old_rules() -> categories.CategoryRules:
    return categories.CategoryRules()


def old_category(name: str) -> int:
    """The category today's regex rules (DEFAULT_CATEGORY_RULES) give the name."""
    return _old_rules().categorize(name, [])


def category_decider() -> tuple[str, Callable[[str, ParsedName], int]]:
    """(what decides, decide(name, parsed)): category_from_fields where it exists."""
    from_fields = getattr(categories, "category_from_fields", None)
    if from_fields is None:
        return "DEFAULT_CATEGORY_RULES (no usenet.categories.category_from_fields yet)", (
            lambda name, parsed: old_category(name)
        )
    return "usenet.categories.category_from_fields", (lambda name, parsed: from_fields(parsed))


def resolution_class(resolution: int | None) -> int | str:
    if resolution is None or resolution < 720:
        return "sd"
    if resolution < 1080:
        return 720
    if resolution < 2160:
        return 1080
    return 2160


def _episode_right(row: Row, parsed: ParsedName) -> bool | None:
    """Whether every numbering fact the row states is read; None: it states none."""
    checks = []
    if "season" in row:
        checks.append(parsed.seasons[:1] == (row["season"],))
    if "episodes" in row:
        checks.append(tuple(sorted(parsed.episodes)) == tuple(row["episodes"]))
    if "absolute" in row:
        checks.append(tuple(sorted(parsed.absolute_episodes)) == tuple(row["absolute"]))
    if "episodes_or_absolute" in row:
        stated = tuple(row["episodes_or_absolute"])
        checks.append(
            stated in (tuple(sorted(parsed.episodes)), tuple(sorted(parsed.absolute_episodes)))
        )
    if "air_date" in row:
        date = parsed.air_date
        checks.append(date is not None and date.isoformat() == row["air_date"])
    if not checks:
        return None
    if row.get("full_season"):
        checks.append(parsed.full_season and not parsed.episodes)
    return all(checks)


def judge(row: Row, parsed: ParsedName, category: int) -> dict[str, bool]:
    """measure -> right, for each measure the row states."""
    out = {"top_level": category // 1000 * 1000 == row["top_level"]}
    if "category" in row:
        out["category"] = category == row["category"] or category in row.get("category_also", ())
    episode = _episode_right(row, parsed)
    if episode is not None:
        out["episode"] = episode
    if "year" in row:
        out["year"] = parsed.year == row["year"]
    if "resolution" in row:
        out["resolution"] = resolution_class(parsed.resolution) == row["resolution"]
    if row["top_level"] == 5000 and {"title", "season", "episodes"} <= row.keys():
        out["tvsearch"] = (
            parsed.title_key == title_key(row["title"])
            and row["season"] in parsed.seasons
            and set(row["episodes"]) <= set(parsed.episodes)
            and category in TV_SEARCH_CATEGORIES
        )
    return out


@dataclass
class Tally:
    """Right and counted, per measure, for one group of rows."""

    label: str
    rows: int = 0
    right: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    counted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    misses: dict[str, list[str]] = field(default_factory=lambda: {m: [] for m in MEASURES})

    def add(self, name: str, verdicts: dict[str, bool]) -> None:
        self.rows += 1
        for measure, ok in verdicts.items():
            self.counted[measure] += 1
            self.right[measure] += ok
            if not ok:
                self.misses[measure].append(name)

    def share(self, measure: str) -> float | None:
        counted = self.counted[measure]
        return self.right[measure] / counted if counted else None

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "rows": self.rows,
            **{m: {"right": self.right[m], "counted": self.counted[m]} for m in MEASURES},
        }


def group_label(row: Row, sources: list[dict[str, Any]]) -> str:
    source = sources[row["source"]]
    label = source.get("label") or f"{source['repo'].split('/')[0]} {source['fixture']}"
    return label + " (TV names)" if row.get("kind_conflict") else label


@dataclass
class Score:
    groups: list[Tally]
    total: Tally  # every row but the kind conflicts
    decided_by: str

    def as_json(self) -> dict[str, Any]:
        return {
            "decided_by": self.decided_by,
            "groups": [g.as_json() for g in self.groups],
            "total": self.total.as_json(),
        }


def score(
    rows: Iterable[Row] | None = None,
    *,
    parse: Callable[[str], ParsedName] = parse_release_name,
    decide: tuple[str, Callable[[str, ParsedName], int]] | None = None,
    corpus: Path = DATA,
) -> Score:
    """Each measure over a corpus file (or `rows` of it), per source group and in total."""
    data = load(corpus)
    sources = data["sources"]
    decided_by, categorize = decide or category_decider()
    groups: dict[str, Tally] = {}
    total = Tally("total (kind conflicts apart)")
    for row in data["names"] if rows is None else rows:
        parsed = parse(row["name"])
        verdicts = judge(row, parsed, categorize(row["name"], parsed))
        label = group_label(row, sources)
        groups.setdefault(label, Tally(label)).add(row["name"], verdicts)
        if not row.get("kind_conflict"):
            total.add(row["name"], verdicts)
    return Score(list(groups.values()), total, decided_by)


def score_old_rules(rows: Iterable[Row] | None = None, corpus: Path = DATA) -> Score:
    """The baseline: today's regex category rules (they read no season, year or resolution)."""
    return score(
        rows,
        corpus=corpus,
        parse=lambda name: ParsedName(),
        decide=("DEFAULT_CATEGORY_RULES", lambda name, parsed: old_category(name)),
    )
