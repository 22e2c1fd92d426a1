"""The category rules this project shipped as its defaults until release categories
were decided from the parsed name (usenet/categories.py, commits aa53b96 to
a77f9cd), frozen here to recognise their stored copies.

The rule-set form offered the rules in force for editing, and NULL (the
defaults) was shown as this list, so a rule set published from the form holds
a copy of them, often beside an operator's own rules. A stored rule equal to
one of these is the old default way of deciding, not an operator's choice: it
is not an override (catalog.rulesets.category_rules), or it would decide every
release the old way and the parsed name never would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RETIRED_DEFAULT_CATEGORY_RULES: tuple[dict[str, Any], ...] = (
    {
        "category": 5045,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:s\\d{1,3}[._ ]?e\\d{1,3}|\\d{1,2}x\\d{2,3}|s\\d{1,3}|(?:19|20)\\d\\d[._ ]\\d\\d[._ ]\\d\\d|complete[._ ]series)(?:$|[._ \\-\\]\\)])",
            "(?i)(?:^|[._ \\-\\[\\(])(?:2160p|uhd|4k)(?:$|[._ \\-\\]\\)])",
        ],
    },
    {
        "category": 5040,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:s\\d{1,3}[._ ]?e\\d{1,3}|\\d{1,2}x\\d{2,3}|s\\d{1,3}|(?:19|20)\\d\\d[._ ]\\d\\d[._ ]\\d\\d|complete[._ ]series)(?:$|[._ \\-\\]\\)])",
            "(?i)(?:^|[._ \\-\\[\\(])(?:720p|1080p|1080i)(?:$|[._ \\-\\]\\)])",
        ],
    },
    {
        "category": 5030,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:s\\d{1,3}[._ ]?e\\d{1,3}|\\d{1,2}x\\d{2,3}|s\\d{1,3}|(?:19|20)\\d\\d[._ ]\\d\\d[._ ]\\d\\d|complete[._ ]series)(?:$|[._ \\-\\]\\)])"
        ],
    },
    {
        "category": 3030,
        "name": ["(?i)(?:^|[._ \\-\\[\\(])(?:audiobook|audiobooks|abook|m4b)(?:$|[._ \\-\\]\\)])"],
    },
    {"category": 2045, "name": ["(?i)(?:^|[._ \\-\\[\\(])(?:2160p|uhd|4k)(?:$|[._ \\-\\]\\)])"]},
    {
        "category": 2040,
        "name": ["(?i)(?:^|[._ \\-\\[\\(])(?:720p|1080p|1080i)(?:$|[._ \\-\\]\\)])"],
    },
    {
        "category": 2030,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:xvid|divx|dvdrip|dvdscr|dvdr|dvd5|dvd9|pal|ntsc|480p|576p|bdrip|brrip|hdtv|pdtv|webrip|web-?dl|x264|x265|h\\.?264|h\\.?265|hevc|avc|bluray|remux)(?:$|[._ \\-\\]\\)])"
        ],
    },
    {
        "category": 3040,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:flac|alac|ape|wav|24bit|16bit|cdda|lossless)(?:$|[._ \\-\\]\\)])"
        ],
    },
    {
        "category": 3010,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:mp3|320kbps|256kbps|192kbps|v0|v2|aac|m4a|ogg|opus)(?:$|[._ \\-\\]\\)])"
        ],
    },
    {
        "category": 7030,
        "name": ["(?i)(?:^|[._ \\-\\[\\(])(?:cbr|cbz|comic|comics)(?:$|[._ \\-\\]\\)])"],
    },
    {
        "category": 7020,
        "name": [
            "(?i)(?:^|[._ \\-\\[\\(])(?:epub|mobi|azw|azw3|pdf|ebook|e-book|retail[._ ]ebook)(?:$|[._ \\-\\]\\)])"
        ],
    },
    {
        "category": 4050,
        "name": [
            "(?i)-(?:codex|skidrow|plaza|reloaded|flt|fitgirl|tenoke|rune|empress|dodi|gog|razor1911|prophet|darksiders|hoodlum)$"
        ],
    },
    {
        "category": 4000,
        "name": [
            "(?i)(?:\\.(?:iso|exe|msi|dmg|img)$|(?:^|[._ \\-\\[\\(])(?:x64|x86|win64|win32|macos|linux|keygen|multilingual|portable|setup|incl[._ ]crack)(?:$|[._ \\-\\]\\)]))"
        ],
    },
    {"category": 5000, "group": "(?i)\\.(?:tv|teevee|multimedia\\.tv|hdtv)(?:\\.|$)"},
    {"category": 2000, "group": "(?i)\\.(?:movies|dvdr|x264|hd\\.movies|bluray)(?:\\.|$)"},
    {"category": 3000, "group": "(?i)\\.(?:sounds|mp3|music)(?:\\.|$)"},
    {"category": 7020, "group": "(?i)\\.(?:e-?books?)(?:\\.|$)"},
    {"category": 4000, "group": "(?i)\\.(?:warez|apps|cd\\.image|games)(?:\\.|$)"},
)


def rule_form(rule: Mapping[str, Any]) -> tuple[Any, tuple[Any, ...], Any]:
    """A rule as (category, name patterns, group pattern): two spellings of one rule compare equal."""
    names = rule.get("name", [])
    if isinstance(names, str):
        names = [names]
    return (
        rule.get("category"),
        tuple(names) if isinstance(names, list) else names,
        rule.get("group"),
    )


RETIRED_FORMS = frozenset(rule_form(rule) for rule in RETIRED_DEFAULT_CATEGORY_RULES)


def is_retired_default(rule: Any) -> bool:
    """Whether a stored category rule is a copy of one of the retired defaults."""
    return isinstance(rule, Mapping) and rule_form(rule) in RETIRED_FORMS


__all__ = ["RETIRED_DEFAULT_CATEGORY_RULES", "is_retired_default", "rule_form"]
