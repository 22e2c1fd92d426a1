"""A release's name read into the fields the search serves (usenet.release_names), and
its category decided from them.

`read_name` parses a release name and bounds what the parser gives to its
columns (a name comes from Usenet: every count and length is capped, every
number kept within smallint). `decide_category` checks the operator's
category rules of the rule set first (overrides, catalog.rulesets), then the
category the fields give. The batch path (catalog.releases) stores both in
the INSERT that creates a release; `parse_release_names` reads the stored
releases again when FIELDS_VERSION moves on (`manage.py parse_release_names`).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from usenet import categories
from usenet.categories import CategoryRules
from usenet.release_names import FIELDS_VERSION, KINDS, ParsedName, parse_release_name

from .rulesets import category_rules, current_rules
from .sql import queries

SMALLINT_MAX = 32_767
# Seasons, episodes or absolute numbers kept per release (a multi-season pack
# names a few; a name cannot honestly name more).
MAX_NUMBERS = 32
MAX_WORD = 64  # source, codec, release group
MAX_TITLE_KEY = 300


@dataclass(frozen=True, slots=True)
class NameFields:
    """The stored fields of a release name: the columns of catalog_release, bounded."""

    parsed: ParsedName
    kind: str
    title_key: str
    year: int | None
    seasons: tuple[int, ...]
    episodes: tuple[int, ...]
    absolute_episodes: tuple[int, ...]
    air_date: datetime.date | None
    resolution: int | None


def _small(value: int | None) -> int | None:
    return value if value is not None and 0 <= value <= SMALLINT_MAX else None


def _numbers(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(v for v in values[:MAX_NUMBERS] if 0 <= v <= SMALLINT_MAX)


def _word(value: str | None) -> str | None:
    return value[:MAX_WORD] if value else None


def read_name(name: str) -> NameFields:
    """The fields of a release name, each within its column."""
    parsed = parse_release_name(name)
    return NameFields(
        parsed=parsed,
        kind=parsed.kind if parsed.kind in KINDS else "other",
        title_key=parsed.title_key[:MAX_TITLE_KEY],
        year=_small(parsed.year),
        seasons=_numbers(parsed.seasons),
        episodes=_numbers(parsed.episodes),
        absolute_episodes=_numbers(parsed.absolute_episodes),
        air_date=parsed.air_date,
        resolution=_small(parsed.resolution),
    )


def category_from_fields(fields: NameFields, groups: Sequence[str]) -> int:
    """The newznab category a release's fields give (no operator rule)."""
    return categories.category_from_fields(fields.parsed, groups)


def decide_category(
    overrides: CategoryRules, fields: NameFields, name: str, groups: Sequence[str]
) -> int:
    """The operator's first matching category rule, else the category of the fields."""
    found = overrides.first_match(name, groups)
    return category_from_fields(fields, groups) if found is None else found


def _array(values: Sequence[int]) -> str:
    """A smallint[] literal: per-release arrays travel as text through one unnest."""
    return "{" + ",".join(str(v) for v in values) + "}"


def field_params(fields: Sequence[NameFields]) -> dict[str, Any]:
    """The fields of many releases as parallel lists, the parameters of the SQL that stores them."""
    return {
        "kinds": [f.kind for f in fields],
        "title_keys": [f.title_key for f in fields],
        "years": [f.year for f in fields],
        "seasons": [_array(f.seasons) for f in fields],
        "episodes": [_array(f.episodes) for f in fields],
        "absolute_episodes": [_array(f.absolute_episodes) for f in fields],
        "air_dates": [f.air_date for f in fields],
        "full_seasons": [f.parsed.full_season for f in fields],
        "resolutions": [f.resolution for f in fields],
        "sources": [_word(f.parsed.source) for f in fields],
        "codecs": [_word(f.parsed.codec) for f in fields],
        "release_groups": [_word(f.parsed.group) for f in fields],
        "propers": [f.parsed.proper for f in fields],
        "repacks": [f.parsed.repack for f in fields],
        "fields_version": FIELDS_VERSION,
    }


# --- the backfill ----------------------------------------------------------------


@dataclass
class ParseSummary:
    fields_version: int
    rule_version: int
    releases: int = 0  # read again
    total: int = 0  # to read when the run began
    recategorized: int = 0  # of them, whose category changed


@dataclass(frozen=True)
class ParseBatch:
    releases: int  # read again
    recategorized: int
    last_id: int  # the keyset's next `after`; 0 when no release was left


def parse_batch(
    rules: tuple[int, CategoryRules], *, after: int, limit: int, upto: int | None = None
) -> ParseBatch:
    """Read again the next `limit` releases past id `after` (up to `upto`) read under an older parser.

    `rules`: the rule set version and its category rules (current_rules(),
    category_rules()). One short transaction whose rows are locked in id order.
    """
    rule_version, overrides = rules
    rows = queries.fetchall(
        "releases_to_parse",
        {"version": FIELDS_VERSION, "after": after, "limit": limit, "upto": upto},
    )
    if not rows:
        return ParseBatch(0, 0, 0)
    fields = [read_name(r.name) for r in rows]
    params = field_params(fields)
    params.update(
        ids=[r.id for r in rows],
        categories=[
            decide_category(overrides, f, r.name, r.groups)
            for f, r in zip(fields, rows, strict=True)
        ],
        rule_version=rule_version,
    )
    with transaction.atomic():
        done = queries.fetchone("set_release_fields", params)
    return ParseBatch(
        int(done.releases) if done else 0, int(done.recategorized) if done else 0, rows[-1].id
    )


def parse_release_names(
    batch_size: int = 1000,
    progress: Callable[[ParseSummary], None] | None = None,
    *,
    after: int = 0,
) -> ParseSummary:
    """Read again the fields (and the category) of every release read under an older FIELDS_VERSION.

    Keyset by id, one short transaction per batch of `batch_size`
    (`parse_batch`). A release records the FIELDS_VERSION it was read
    under, so a run that is killed resumes where it was and a second run
    finds nothing to do. `after`: start past this id (a resumed run need not
    walk the ids read already).
    """
    rule_version = current_rules().version
    rules = (rule_version, category_rules(rule_version))
    row = queries.fetchone("count_releases_to_parse", {"version": FIELDS_VERSION, "after": after})
    summary = ParseSummary(FIELDS_VERSION, rule_version, total=int(row.releases) if row else 0)
    while (batch := parse_batch(rules, after=after, limit=batch_size)).last_id:
        summary.releases += batch.releases
        summary.recategorized += batch.recategorized
        after = batch.last_id
        if progress is not None:
            progress(summary)
    return summary


__all__ = [
    "NameFields",
    "ParseBatch",
    "ParseSummary",
    "category_from_fields",
    "decide_category",
    "field_params",
    "parse_batch",
    "parse_release_names",
    "read_name",
]
