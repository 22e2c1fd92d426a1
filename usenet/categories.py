"""Release categories: a newznab id from a release's parsed name, and operators' rules over it.

`category_from_fields(parsed, groups)` decides a category from the fields
`usenet.release_names` reads from the name (kind, resolution, source, tags),
the way Sonarr and Radarr tell qualities apart; the newsgroups decide
when the name says nothing, and over a "movie" that only a year or a bare
source made one where they name audio, books or software. `CategoryRules` are the operators' overrides
from the versioned rule set, tried first (`first_match`), and the default
rule list that older releases were categorised by.

A rule names a category and up to two conditions: `name`, a list of
patterns that must all be found in the release name, and `group`, a
pattern that must be found in one of its groups. The first rule whose
conditions hold decides; no rule: OTHER. Patterns are searched, not
anchored, and run under RE2 (`usenet.linear`): matching is linear in the
name whatever the pattern, so `(a+)+$` costs what `a` costs. A pattern RE2
cannot run (lookaround, a backreference, an atomic group, a possessive
quantifier) is refused with RE2's reason, never run by a backtracking engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .linear import LinearPattern, PatternError, compile_linear
from .release_names import ParsedName

# The standard newznab ids this project uses (t=caps lists them).
CATEGORIES: dict[int, str] = {
    2000: "Movies",
    2020: "Movies/Other",
    2030: "Movies/SD",
    2040: "Movies/HD",
    2045: "Movies/UHD",
    2050: "Movies/BluRay",
    2060: "Movies/3D",
    3000: "Audio",
    3010: "Audio/MP3",
    3020: "Audio/Video",
    3030: "Audio/Audiobook",
    3040: "Audio/Lossless",
    4000: "PC",
    4050: "PC/Games",
    5000: "TV",
    5030: "TV/SD",
    5040: "TV/HD",
    5045: "TV/UHD",
    5050: "TV/Other",
    5070: "TV/Anime",
    5080: "TV/Documentary",
    7000: "Books",
    7020: "Books/EBook",
    7030: "Books/Comics",
    8000: "Other",
    8010: "Other/Misc",
}
OTHER = 8010

# Separators in scene names: a tag stands between two of them (or an end).
_B = r"(?:^|[._ \-\[\(])"
_E = r"(?:$|[._ \-\]\)])"
TV = rf"(?i){_B}(?:s\d{{1,3}}[._ ]?e\d{{1,3}}|\d{{1,2}}x\d{{2,3}}|s\d{{1,3}}|(?:19|20)\d\d[._ ]\d\d[._ ]\d\d|complete[._ ]series){_E}"
UHD = rf"(?i){_B}(?:2160p|uhd|4k){_E}"
HD = rf"(?i){_B}(?:720p|1080p|1080i){_E}"
VIDEO = (
    rf"(?i){_B}(?:xvid|divx|dvdrip|dvdscr|dvdr|dvd5|dvd9|pal|ntsc|480p|576p|bdrip|brrip|hdtv"
    rf"|pdtv|webrip|web-?dl|x264|x265|h\.?264|h\.?265|hevc|avc|bluray|remux){_E}"
)
LOSSLESS = rf"(?i){_B}(?:flac|alac|ape|wav|24bit|16bit|cdda|lossless){_E}"
MP3 = rf"(?i){_B}(?:mp3|320kbps|256kbps|192kbps|v0|v2|aac|m4a|ogg|opus){_E}"
AUDIOBOOK = rf"(?i){_B}(?:audiobook|audiobooks|abook|m4b){_E}"
COMICS = rf"(?i){_B}(?:cbr|cbz|comic|comics){_E}"
EBOOK = rf"(?i){_B}(?:epub|mobi|azw|azw3|pdf|ebook|e-book|retail[._ ]ebook){_E}"
GAMES = r"(?i)-(?:codex|skidrow|plaza|reloaded|flt|fitgirl|tenoke|rune|empress|dodi|gog|razor1911|prophet|darksiders|hoodlum)$"
PC = rf"(?i)(?:\.(?:iso|exe|msi|dmg|img)$|{_B}(?:x64|x86|win64|win32|macos|linux|keygen|multilingual|portable|setup|incl[._ ]crack){_E})"

DEFAULT_CATEGORY_RULES: tuple[dict[str, Any], ...] = (
    {"category": 5045, "name": [TV, UHD]},
    {"category": 5040, "name": [TV, HD]},
    {"category": 5030, "name": [TV]},
    {"category": 3030, "name": [AUDIOBOOK]},
    {"category": 2045, "name": [UHD]},
    {"category": 2040, "name": [HD]},
    {"category": 2030, "name": [VIDEO]},
    {"category": 3040, "name": [LOSSLESS]},
    {"category": 3010, "name": [MP3]},
    {"category": 7030, "name": [COMICS]},
    {"category": 7020, "name": [EBOOK]},
    {"category": 4050, "name": [GAMES]},
    {"category": 4000, "name": [PC]},
    # Group names last: a name says more than the group it was posted to.
    {"category": 5000, "group": r"(?i)\.(?:tv|teevee|multimedia\.tv|hdtv)(?:\.|$)"},
    {"category": 2000, "group": r"(?i)\.(?:movies|dvdr|x264|hd\.movies|bluray)(?:\.|$)"},
    {"category": 3000, "group": r"(?i)\.(?:sounds|mp3|music)(?:\.|$)"},
    {"category": 7020, "group": r"(?i)\.(?:e-?books?)(?:\.|$)"},
    {"category": 4000, "group": r"(?i)\.(?:warez|apps|cd\.image|games)(?:\.|$)"},
)


def _compile(pattern: Any, where: str) -> LinearPattern:
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"{where}: a pattern is a non-empty string.")
    try:
        return compile_linear(pattern)
    except PatternError as error:
        raise ValueError(
            f"{where}: {pattern!r} cannot run under RE2: {error}. Category patterns are"
            " RE2 syntax, so that matching stays linear in the name: no lookaround,"
            " backreferences, atomic groups or possessive quantifiers."
        ) from None


def _any_of(patterns: list[str]) -> LinearPattern | None:
    """One pattern matching wherever any of `patterns` matches (None: none, or too big)."""
    if not patterns:
        return None
    # RE2 scopes a flag group such as "(?i)" to the group it stands in.
    try:
        return compile_linear("|".join(f"(?:{p})" for p in dict.fromkeys(patterns)))
    except PatternError:
        return None


@dataclass(frozen=True)
class CategoryRule:
    category: int
    name: tuple[LinearPattern, ...]
    group: LinearPattern | None

    def matches(self, name: str, groups: Sequence[str]) -> bool:
        if not all(p.contains(name) for p in self.name):
            return False
        return self.group is None or any(self.group.contains(g) for g in groups)


class CategoryRules:
    """Parsed category rules: `categorize(name, groups)` is the first matching rule's id.

    A rule that cannot be parsed raises ValueError naming it; with
    `skip_refused` (rules stored before a stricter check) it is left out
    instead and its reason kept in `refused`, while `source` keeps it as stored.
    """

    def __init__(
        self, rules: Iterable[dict[str, Any]] | None = None, *, skip_refused: bool = False
    ) -> None:
        source = list(DEFAULT_CATEGORY_RULES if rules is None else rules)
        self.source: list[dict[str, Any]] = source
        self.refused: list[str] = []
        parsed: list[CategoryRule] = []
        for index, item in enumerate(source):
            try:
                parsed.append(self._rule(index, item))
            except ValueError as error:
                if not skip_refused:
                    raise
                self.refused.append(str(error))
        self.rules: tuple[CategoryRule, ...] = tuple(parsed)
        self._group_rules = tuple(rule for rule in self.rules if not rule.name)
        self._any_name = _any_of([p.pattern for rule in self.rules for p in rule.name])

    @staticmethod
    def _rule(index: int, item: Any) -> CategoryRule:
        where = f"categories[{index}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where}: a rule is an object with category, name and/or group.")
        unknown = sorted(set(item) - {"category", "name", "group"})
        if unknown:
            raise ValueError(f"{where}: unknown fields {', '.join(unknown)}.")
        category = item.get("category")
        if category not in CATEGORIES:
            raise ValueError(f"{where}: category {category!r} is not a known newznab id.")
        names = item.get("name", [])
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list):
            raise ValueError(f"{where}: name is a list of patterns.")
        group = item.get("group")
        if not names and group is None:
            raise ValueError(f"{where}: a rule needs a name pattern or a group pattern.")
        return CategoryRule(
            category,
            tuple(_compile(p, f"{where}.name") for p in names),
            None if group is None else _compile(group, f"{where}.group"),
        )

    def categorize(self, name: str, groups: Sequence[str]) -> int:
        """The first matching rule's id; OTHER where none matches."""
        found = self.first_match(name, groups)
        return OTHER if found is None else found

    def first_match(self, name: str, groups: Sequence[str]) -> int | None:
        """The first matching rule's id; None where none matches (an override's absence)."""
        # Most of the cost is names no name pattern matches (every rule is
        # tried): one scan with all of them at once settles those.
        if self._any_name is not None and not self._any_name.contains(name):
            rules: Sequence[CategoryRule] = self._group_rules
        else:
            rules = self.rules
        for rule in rules:
            if rule.matches(name, groups):
                return rule.category
        return None


# Newsgroups that say what a release is when its name does not: the first of a
# group's dotted words (after the first, "alt") that is one of these decides, or a
# later one naming a child of its parent (sounds.mp3: 3010).
_GROUP_WORDS: dict[str, int] = {
    "anime": 5070,
    "tv": 5000,
    "teevee": 5000,
    "hdtv": 5040,
    "movies": 2000,
    "dvdr": 2030,
    "x264": 2040,
    "bluray": 2040,
    "sounds": 3000,
    "mp3": 3010,
    "music": 3000,
    "lossless": 3040,
    "flac": 3040,
    "audiobooks": 3030,
    "ebook": 7020,
    "ebooks": 7020,
    "e-book": 7020,
    "e-books": 7020,
    "comics": 7030,
    "warez": 4000,
    "apps": 4000,
    "games": 4050,
    "documentaries": 5080,
}
_MAX_GROUPS = 16
# The thousands of audio, PC and books: what a group names that no video is.
_NOT_VIDEO = frozenset((3, 4, 7))


def _by_resolution(resolution: int | None, uhd: int, hd: int, sd: int) -> int:
    if resolution is None or resolution < 720:
        return sd
    return uhd if resolution >= 2160 else hd


def category_from_fields(parsed: ParsedName, groups: Sequence[str] = ()) -> int:
    """The newznab id of a release from its parsed name; its groups where the name is silent
    (or names a movie with no encode and no HD picture: a year or a bare WEB, CD or DVD,
    which a sound, book or software group overrules).

    TV: 5070 anime, 5080 documentary, else by resolution 5045 (2160p), 5040
    (720p-1440p), 5030 (below, or none stated: Sonarr's SD). Movies: 2050 a
    whole BluRay disc (a 3D one too, as Radarr files it) or a 1080p remux, 2060
    3D encodes, 2045/2040/2030 by resolution.
    Audio: 3030 audiobook, 3020 music video, 3040 lossless, 3010 MP3, else
    3000. Books 7030 comics, 7020 e-books. Software 4050 games, else 4000.
    """
    kind = parsed.kind
    tags = parsed.tags
    if kind == "anime":
        return 5070
    if kind == "tv":
        if "documentary" in tags:
            return 5080
        if "anime" in tags or _group_category(groups) == 5070:
            return 5070
        return _by_resolution(parsed.resolution, 5045, 5040, 5030)
    if kind == "movie":
        # A year or a bare source (WEB, CD, DVD) may be all that made it a movie:
        # scene music is "Artist-Album-WEB-2023-GRP". Where no encode or HD picture
        # says video, a sound, book or software group says more.
        if parsed.codec is None and (parsed.resolution or 0) < 720 and "disc" not in tags:
            grouped = _group_category(groups)
            if grouped is not None and grouped // 1000 in _NOT_VIDEO:
                return grouped
        if "disc" in tags or (parsed.source == "remux" and parsed.resolution == 1080):
            return 2050
        if "3d" in tags:
            return 2060
        return _by_resolution(parsed.resolution, 2045, 2040, 2030)
    if kind == "audio":
        for tag, category in (("audiobook", 3030), ("music_video", 3020), ("lossless", 3040)):
            if tag in tags:
                return category
        return 3010 if "mp3" in tags else 3000
    if kind == "book":
        return 7030 if "comic" in tags else 7020
    if kind == "software":
        return 4050 if "game" in tags else 4000
    return _group_category(groups) or OTHER


def _group_category(groups: Sequence[str]) -> int | None:
    """The category a release's newsgroups name (alt.binaries.multimedia.anime: 5070); a
    later word naming a child of the same parent says more (alt.binaries.sounds.mp3: 3010)."""
    for group in groups[:_MAX_GROUPS]:
        found = None
        for word in group[:256].lower().split(".")[1:]:
            named = _GROUP_WORDS.get(word)
            if named is None:
                continue
            if found is None:
                found = named
            elif found % 1000 == 0 and named // 1000 == found // 1000:
                found = named
        if found is not None:
            return found
    return None


__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORY_RULES",
    "OTHER",
    "CategoryRule",
    "CategoryRules",
    "category_from_fields",
]
