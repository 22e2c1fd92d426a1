"""A search's parameters read into a SearchQuery: what every search takes (q, cat,
group, maxage, limit, offset, incomplete), and what tvsearch and movie ask of the
fields of a release's name (docs/newznab.md, "Search").

Sonarr and Radarr ask in these forms (their NewznabRequestGenerator):
- an episode: `season=1&ep=2` (`season=00` for specials), with `q` the
  series title cleaned (no leading "The", "&" as "and", no apostrophes);
- a season: `season=1` alone; it matches the season's packs and its episodes;
- a daily show: `season=2024&ep=01/15`, a year of it `season=2024`; also
  read: `ep=2024-01-15` (or with / or .) with or without the season;
- anime: `t=search&q=Title+13` (the absolute number after the title); also
  read: tvsearch `ep=13` without a season;
- a movie: `t=search&q=Title+2019` (Radarr), or `t=movie&q=Title` with the
  year last or alone in `q`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, timedelta

from django.conf import settings
from django.http import HttpRequest
from django.utils.timezone import now

from usenet.numbers import NotANumber, ascii_digits, whole_number

from . import params
from .categories import expand
from .errors import BadParameter, MissingParameter
from .selectors import BEGINNING, Episode, Fields, SearchQuery, title_match_key, words_of

FIRST_YEAR, LAST_YEAR = 1900, 2099
MAX_EPISODE = 32767  # the smallint columns' bound (a daily soap numbers past 10,000)
DATE_FORMS = "MM/DD with a year as season, or YYYY-MM-DD"


def search_query(request: HttpRequest, *, default_categories: Sequence[int] = ()) -> SearchQuery:
    """The parameters every search takes (q, cat, group, maxage, limit, offset,
    incomplete, password), strictly."""
    get = request.GET
    limit = params.integer(get, "limit", settings.NEWZNAB_DEFAULT_LIMIT, low=1, high=2**31 - 1)
    assert limit is not None
    categories = params.integer_list(get, "cat") or list(default_categories)
    maxage = params.integer(get, "maxage", None, high=100_000)
    group = params.text(get, "group", max_length=255)
    return SearchQuery(
        words=params.text(get, "q"),
        categories=expand(categories) or None,
        groups=[name.strip() for name in group.split(",") if name.strip()],
        since=now() - timedelta(days=maxage) if maxage is not None else BEGINNING,
        limit=min(limit, settings.NEWZNAB_MAX_LIMIT),
        offset=params.integer(get, "offset", 0) or 0,
        incomplete=params.flag(get, "incomplete"),
        passworded=params.flag(get, "password"),
    )


def year_of(word: str) -> int | None:
    if len(word) == 4 and ascii_digits(word) and FIRST_YEAR <= int(word) <= LAST_YEAR:
        return int(word)
    return None


def titled(query: SearchQuery) -> SearchQuery:
    """t=search: a title then a year (Radarr) or an absolute episode (Sonarr's
    anime) is asked of the fields first; other words are a word search."""
    words = words_of(query.words)
    if len(words) < 2 or not ascii_digits(words[-1]) or len(words[-1]) > 4:
        return query
    rest = " ".join(words[:-1])
    year = year_of(words[-1])
    if year is not None:
        return replace(query, fields=Fields(titles=(title_match_key(rest),), year=year))
    return replace(query, fields=Fields(titles=series_titles(rest), absolute=int(words[-1])))


def movie_query(query: SearchQuery) -> SearchQuery:
    """t=movie: the title, and the year when it is the last word of q."""
    if not query.words:
        return query
    words = words_of(query.words)
    year = year_of(words[-1]) if len(words) > 1 else None
    if year is not None:
        return replace(
            query, fields=Fields(titles=(title_match_key(" ".join(words[:-1])),), year=year)
        )
    return replace(query, fields=Fields(titles=(title_match_key(query.words),)))


def series_titles(q: str) -> tuple[str, ...]:
    """A series title's keys (title_key drops a year or country code that ends it,
    so "Doctor Who 2005" meets "Doctor.Who.2005" and "Doctor.Who"): as given, and
    without a season that ends it ("Anime Title S2": names say "Anime.Title.S02 - 07"
    as often as "Anime Title S2 - 07", the season their own)."""
    keys = [title_match_key(q)]
    words = words_of(q)
    last = words[-1] if len(words) > 1 else ""
    if last[:1] == "s" and 2 <= len(last) <= 3 and ascii_digits(last[1:]):
        keys.append(title_match_key(" ".join(words[:-1])))
    return tuple(dict.fromkeys(keys))


def air_date(text: str, season: int | None) -> date:
    """`01/15` with a year as season, or `2024-01-15` (/, - or .); BadParameter otherwise."""
    parts = text.replace("-", "/").replace(".", "/").split("/")
    if len(parts) == 3 and len(parts[0]) == 4:
        year_text, month_text, day_text = parts
    elif len(parts) == 2 and season is not None and season >= 1000:
        year_text, (month_text, day_text) = str(season), parts
    else:
        raise BadParameter(f"Incorrect parameter (ep: a number, or {DATE_FORMS})")
    if not all(ascii_digits(part) and len(part) <= 4 for part in (year_text, month_text, day_text)):
        raise BadParameter(f"Incorrect parameter (ep: {text[:12]} is no date; {DATE_FORMS})")
    try:
        day = date(int(year_text), int(month_text), int(day_text))
    except ValueError:
        raise BadParameter(
            f"Incorrect parameter (ep: {text[:12]} is no date; {DATE_FORMS})"
        ) from None
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        # Nothing airs then; the day after 9999-12-31 is no date either (it was a 500).
        raise BadParameter(
            f"Incorrect parameter (ep: {text[:12]} is no air date; a year {FIRST_YEAR}-{LAST_YEAR})"
        )
    if season is not None and season != day.year:
        raise BadParameter(f"Incorrect parameter (season: {season}, but ep gives {day.year})")
    return day


def tv_query(request: HttpRequest, query: SearchQuery) -> SearchQuery:
    """tvsearch's season and ep: the fields asked when q is a title, and the words'
    episode terms (S01E02 or 1x02) asked of the names when it is not, or no q."""
    season = params.integer(request.GET, "season", None, high=9999)
    ep = params.text(request.GET, "ep", max_length=10)
    titles = series_titles(query.words) if query.words else ()
    if ep and not ascii_digits(ep):
        day = air_date(ep, season)
        fields = Fields(titles, aired_from=day, aired_until=day + timedelta(days=1))
        episode = Episode(day.year, f"{day.month:02d}/{day.day:02d}")
        return replace(query, fields=fields, episode=episode)
    try:
        number = whole_number(ep, high=MAX_EPISODE) if ep else None
    except NotANumber as refused:
        raise BadParameter(f"Incorrect parameter (ep: {refused.expected})") from None
    if season is None:
        if number is None:
            return replace(query, fields=Fields(titles) if titles else None)
        if not titles:
            raise MissingParameter("Missing parameter (season, or q: an ep alone names no episode)")
        # An episode without a season: anime's absolute numbering.
        return replace(
            query,
            words=f"{query.words} {number:02d}",
            fields=Fields(titles, absolute=number),
        )
    if season >= 1000 and number is None:
        # A daily show's year (Sonarr's daily season search), or a season named by
        # its year ("S2014"): either matches.
        if not FIRST_YEAR <= season <= LAST_YEAR:
            raise BadParameter(
                f"Incorrect parameter (season: a season, or a year {FIRST_YEAR}-{LAST_YEAR})"
            )
        fields = Fields(
            titles,
            season=season,
            aired_from=date(season, 1, 1),
            aired_until=date(season + 1, 1, 1),
            season_or_aired=True,
        )
        return replace(query, fields=fields, episode=Episode(season))
    # A year as season with an episode number is a season too ("S2016E231").
    fields = Fields(titles, season=season, episode=number)
    return replace(query, fields=fields, episode=Episode(season, str(number) if ep else ""))
