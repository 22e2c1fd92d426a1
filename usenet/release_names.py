"""Release names read the way Sonarr and Radarr read them: title, year, season, episode, quality.

`parse_release_name(name)` turns a scene, p2p or fansub release name into a
`ParsedName`. It is Django-free and uses no regular expressions: the name is
cut to `MAX_NAME_LENGTH` characters, split once into at most `MAX_TOKENS`
tokens (one `str.translate`, one `split`), and each token is classified by a
dictionary lookup or, for the few that hold digits, by a scan bounded by
`MAX_TOKEN_LENGTH`. Every token is looked at a bounded number of times, so a
name costs time linear in its length, and a 10 KB name costs what its first
`MAX_NAME_LENGTH` characters cost.

How a name is read (the rules Sonarr's and Radarr's parsers follow, written
as one pass over tokens instead of backtracking patterns):

- Tags around the name go first: a file extension (`.mkv`, `.nzb`), a
  site's tag glued after the group (`-GROUP[rarbg]`), a poster's suffix
  (`-Obfuscated`), a leading `[Group]` (fansubs), then the `-GROUP` suffix.
- The title is every token before the first marker: an episode marker
  (`S01E02`, `1x02`, `Season 1`, a date), a quality tag (`720p`, `BluRay`,
  `x264`), or, for a movie, the last year before those (`2001.A.Space.Odyssey
  .1968` is "2001 A Space Odyssey", 1968). A TV title keeps its year
  (`Show.2010.S01E01` is "Show 2010", the key Sonarr searches for a series
  named "Show (2010)").
- Episode numbers: `S01E02`, `S01E02E03`, `S01E01-E03` (a range), `S6E02`,
  `s03.e05`, `S01EP01`, `1x02`, `1x02x03`, `Season 01 Episode 05`, `Saison3`,
  `S01`, `S01-S03`, a three or four digit number after the title
  (`Title.103.720p` is S01E03; never a year or a resolution), dates
  (`2011.04.12`, `2011-04-12`, `12.04.2011`, `20110412`, `110412`) and
  absolute numbers (`[Group] Show - 13 [1080p]`, `Show - 013`, `Show Ep08`).
- Kind: an episode makes TV, and anime when its numbering is absolute or
  its name opens with a fansub `[Group]`; a year or a video quality alone
  makes a movie; audio, book and software tags decide only where nothing
  says video, so `AAC`, `FLAC` or `v2` in an anime name keep it anime.

Numbers are ASCII digits 0-9 only ("²" and Arabic-Indic digits are letters
here); they are read through `usenet.numbers.ascii_digits`.

The interface (`ParsedName`, `parse_release_name`, `KINDS`, `FIELDS_VERSION`)
is what the catalog stores and searches on; bump `FIELDS_VERSION` whenever a
change to the parser can change a stored field, so the backfill command
(`manage.py parse_release_names`) knows which releases to parse again.
`title_key(text)` is the key a title is matched on; a search applies it to
the query the client sent (Sonarr's cleaned series title) to match it.
"""

from __future__ import annotations

import datetime
import unicodedata
from dataclasses import dataclass

from .numbers import ascii_digits

# Bump when the parser changes what it returns for some name.
FIELDS_VERSION = 2

MAX_NAME_LENGTH = 512
MAX_TOKENS = 64
# Longer tokens are words to this parser (never a number or a marker).
MAX_TOKEN_LENGTH = 32
# A range such as S01E01-E99 or S01-S30 lists at most this many numbers.
MAX_RANGE = 100

KINDS = ("tv", "movie", "anime", "audio", "book", "software", "other")


@dataclass(frozen=True, slots=True)
class ParsedName:
    """The fields of one release name; absent fields are None or empty."""

    kind: str = "other"
    # The title as a person writes it ("The Show"), and its search key (see title_key).
    title: str = ""
    title_key: str = ""
    year: int | None = None
    # Seasons covered: one for an episode or a pack, several for a multi-season pack.
    seasons: tuple[int, ...] = ()
    # Episode numbers within the season (a multi-episode name has several).
    episodes: tuple[int, ...] = ()
    # Absolute episode numbers (anime numbering without a season).
    absolute_episodes: tuple[int, ...] = ()
    # A daily show's air date.
    air_date: datetime.date | None = None
    # A whole season (or several), no episode numbers.
    full_season: bool = False
    special: bool = False
    # Vertical resolution: 480, 576, 720, 1080, 1440, 2160. Where the name
    # gives a source but no resolution, the one Sonarr assumes for it
    # (BluRay 720, HDTV/WEB-DL/DVD 480).
    resolution: int | None = None
    source: str | None = None
    codec: str | None = None
    edition: str | None = None
    languages: tuple[str, ...] = ()
    group: str | None = None
    proper: bool = False
    repack: bool = False
    # Added in FIELDS_VERSION 2.
    # What the name says about its category beyond the kind: "3d", "disc"
    # (a whole BluRay disc), "documentary", "audiobook", "lossless", "mp3",
    # "music_video", "ebook", "comic", "game".
    tags: tuple[str, ...] = ()
    # A fansub's version ("- 09v2"): 2 and up is a fixed release.
    version: int | None = None


_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdef")
_SEPARATORS = str.maketrans(
    {c: " " for c in "._[](){}+,;\"|/\\~*!?:<>【】「」『』（）〔〕《》\t\r\n\x00"}
)
_APOSTROPHES = str.maketrans({"'": "", "’": "", "`": "", "´": ""})
_KEY_SEPARATORS = str.maketrans({c: " " for c in "._-[](){}+,;:\"|/\\~*!?&@#%^=<>"})
_KEY_DROPPED = frozenset(("and", "&"))

# What a token means, looked up once per token. (field, value).
_RES = "res"
_SRC = "src"
_CODEC = "codec"
_AUDIO = "audio"  # an audio track's format: AAC, AC3, DTS; says nothing about the kind
_LANG = "lang"
_EDITION = "edition"
_FLAG = "flag"  # proper, repack, and words that end a title but carry no field
_TAG = "tag"  # a category hint (see ParsedName.tags)
_SEASON_WORD = "season"
_EPISODE_WORD = "episode"
_SPECIAL = "special"
_PART = "part"
_COMPLETE = "complete"

_WORDS: dict[str, tuple[str, object]] = {}


def _add(field: str, words: str, value: object = None) -> None:
    for word in words.split():
        _WORDS[word] = (field, word if value is None else value)


for _res, _words in (
    (480, "480p 480i 360p 540p sd 640x480 848x480 720x480 704x480"),
    (576, "576p 576i 720x576"),
    (720, "720p 720i 960p 1280x720 hd720p"),
    (1080, "1080p 1080i fhd 1920x1080 1920x800 1920x816 1920x1040 hd1080p 4kto1080p"),
    (1440, "1440p 2560x1440"),
    (2160, "2160p 4k uhd 3840x2160 4096x2160 2160i"),
):
    _add(_RES, _words, _res)
_add(_SRC, "bluray blu-ray bd bdmux bdremux hddvd hd-dvd uhdbd", "bluray")
_add(_SRC, "bdrip bdlight brrip bd-rip br-rip uhdbdrip", "bdrip")
_add(_SRC, "remux", "remux")
_add(_SRC, "web-dl webdl web webdlrip web-dlrip webdlmux amazonhd itunes itunesHD netflixhd", "webdl")
_add(_SRC, "webrip web-rip webmux", "webrip")
_add(_SRC, "hdtv hdtvrip ahdtv uhdtv", "hdtv")
_add(_SRC, "pdtv sdtv dsr dsrip tvrip satrip dthrip dvb", "sdtv")
_add(_SRC, "dvdrip dvd dvdr dvd-r dvd5 dvd9 dvdscr ntsc pal xvidvd r5 dvd-rip", "dvd")
_add(_SRC, "cam camrip hdcam ts telesync hdts tc telecine workprint scr screener", "cam")
_add(_SRC, "rawhd raw-hd", "rawhd")
_add(_CODEC, "x264 h264 avc x.264 h.264", "h264")
_add(_CODEC, "x265 h265 hevc", "h265")
_add(_CODEC, "xvid divx xvidhd", "xvid")
_add(_CODEC, "mpeg2 mpeg-2", "mpeg2")
_add(_CODEC, "vc1 vc-1", "vc1")
_add(_CODEC, "av1", "av1")
_add(_CODEC, "vp9", "vp9")
_add(
    _AUDIO,
    "aac aac2 aac5 ac3 eac3 dd dd2 dd5 ddp ddp2 ddp5 dd+ dts dts-hd dtshd dts-x dtsx truehd atmos"
    " flac2 lpcm pcm opus 5 1 2 0 7 dual-audio dualaudio",
)
_add(
    _FLAG,
    "ws internal limited readnfo nfofix subbed subs hardsub hardsubs hc dubbed dub"
    " hdr hdr10 hdr10+ dv dovi sdr 10bit 10-bit 8bit hi10p hi10 10bits"
    " amzn nf dsnp hmax atvp hulu pcok stan it ma cr funi vrv"
    " multisubs multi-subs sub vostfr vosten batch mkv mp4 avi rarbg eztv ettv"
    " 3ch 6ch 2ch 60fps 50fps 24fps nordic",
)
_add(_FLAG, "proper real", "proper")
_add(_FLAG, "repack rerip repack2 rerip2", "repack")
_add(_TAG, "3d hsbs h-sbs sbs hou h-ou half-sbs half-ou", "3d")
_add(_TAG, "bdmv bd25 bd50 bd66 bd100 br-disk brdisk avchd complete-bluray", "disc")
_add(_TAG, "documentary docu doku documental docuseries", "documentary")
_add(_TAG, "audiobook audiobooks abook m4b unabridged abridged", "audiobook")
_add(_TAG, "flac alac ape wav lossless 24bit 16bit 24-bit 16-bit cdda vinyl hi-res", "lossless")
_add(
    _TAG,
    "mp3 320kbps 256kbps 192kbps 128kbps v0 cbr320 320 m4a ogg 320k vbr discography album cdm cds",
    "mp3",
)
_add(_TAG, "mvid mdvdr mbluray musicvideo concert", "music_video")
_add(_TAG, "epub mobi azw azw3 ebook e-book ebooks pdf retail", "ebook")
_add(_TAG, "cbr cbz comic comics", "comic")
_add(_TAG, "codex skidrow plaza reloaded flt fitgirl tenoke rune empress dodi razor1911", "game")
_add(_TAG, "iso exe msi dmg x64 x86 win64 win32 macos osx linux keygen portable setup", "software")
_add(_TAG, "anime", "anime")
for _lang, _words in (
    ("english", "english eng"),
    ("german", "german ger deutsch"),
    ("french", "french fre truefrench vff vf vfq vf2"),
    ("spanish", "spanish spa esp castellano latino"),
    ("italian", "italian ita"),
    ("dutch", "dutch nl flemish"),
    ("russian", "russian rus"),
    ("japanese", "japanese jap jpn"),
    ("korean", "korean kor"),
    ("chinese", "chinese chs cht mandarin cantonese"),
    ("portuguese", "portuguese por"),
    ("swedish", "swedish swe"),
    ("danish", "danish dan"),
    ("norwegian", "norwegian nor"),
    ("finnish", "finnish fin"),
    ("polish", "polish pol pl"),
    ("hungarian", "hungarian hun"),
    ("czech", "czech cze"),
    ("turkish", "turkish tur"),
    ("hindi", "hindi"),
    ("arabic", "arabic ara"),
    ("greek", "greek"),
    ("hebrew", "hebrew heb"),
    ("multi", "multi multilang multilanguage dual"),
):
    _add(_LANG, _words, _lang)
for _edition, _words in (
    ("Extended", "extended"),
    ("Unrated", "unrated"),
    ("Uncut", "uncut"),
    ("Uncensored", "uncensored"),
    ("Remastered", "remastered"),
    ("Theatrical", "theatrical"),
    ("IMAX", "imax"),
    ("Criterion", "criterion"),
    ("Directors Cut", "directors dc"),
    ("Final Cut", "final"),
    ("Ultimate", "ultimate"),
    ("Collectors", "collectors"),
    ("Anniversary", "anniversary"),
    ("Restored", "restored"),
    ("Special Edition", "se"),
):
    _add(_EDITION, _words, _edition)
_add(_SEASON_WORD, "season seasons saison saisons staffel temporada stagione series-", "season")
_add(_EPISODE_WORD, "episode episodes ep ep. episodio folge", "episode")
_add(_SPECIAL, "special specials ova oad ovas oads", "special")
_add(_PART, "part pt", "part")
_add(_COMPLETE, "complete", "complete")

# Words of a title (a weak tag must follow a title word to end the title).
_WEAK = frozenset((_AUDIO, _LANG, _EDITION, _TAG, _FLAG, _SPECIAL, _PART, _COMPLETE))
# Resolutions that are never an episode number ("Show.720.HDTV").
_RESOLUTION_NUMBERS = frozenset((360, 480, 540, 576, 720, 1080, 1440, 2160))
# Glued forms: "Bluray720p", "WEB1080p", "x264-720p" read their resolution from the end.
_RES_SUFFIXES = tuple(k for k, v in _WORDS.items() if v[0] == _RES and k[-1] in "pi")
# The resolution a source implies when the name gives none (Sonarr's defaults).
_SOURCE_RESOLUTION = {
    "bluray": 720,
    "remux": 1080,
    "bdrip": 480,
    "webdl": 480,
    "webrip": 480,
    "hdtv": 480,
    "sdtv": 480,
    "dvd": 480,
    "cam": 480,
    "rawhd": 1080,
}
# File extensions and poster's suffixes taken off before the group is read.
_EXTENSIONS = frozenset(
    "mkv mp4 avi m4v wmv mov mpg mpeg ts m2ts nzb par2 nfo rar zip srt sub idx webm flv ogm".split()
)
_SUFFIXES = frozenset(
    "obfuscated scrambled postbot xpost asrequested rp sample rakuv rakuvfinhel 1 2 3 4".split()
)
_SITE_TAGS = frozenset(
    "rarbg eztv ettv tgx eztv.re eztv.io rartv vtv publichd ettv.to 1337x yts yts.mx yify".split()
)
_DOMAIN_ENDS = (".com", ".org", ".net", ".to", ".me", ".info", ".re", ".io", ".cc", ".tv")

_THIS_YEAR = datetime.date.today().year


def _number(text: str) -> int | None:
    """Text that is 1 to 4 ASCII digits, as a number; None otherwise."""
    if 0 < len(text) <= 4 and ascii_digits(text):
        return int(text)
    return None


def _fold(word: str) -> str:
    """Letters without their accents ("é" → "e"), for a key a plain-ASCII query matches."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def title_key(text: str) -> str:
    """The key a title is matched on: lower-case words of letters and digits, one space apart.

    It is the key of Sonarr's cleaned search title, so a query and a release
    name meet: a leading "The" is dropped (Sonarr drops it from its queries),
    "&" and "and" are dropped (Sonarr sends "Law & Order" as "Law Order"),
    apostrophes join their word ("Grey's" is "greys"), accents fold
    ("Pokémon" is "pokemon"), and years and country codes stay words
    ("Doctor Who 2005", "The Office US" are "doctor who 2005", "office us").
    """
    words = text[:MAX_NAME_LENGTH].lower().translate(_APOSTROPHES).translate(_KEY_SEPARATORS).split()
    kept: list[str] = []
    for word in words[:MAX_TOKENS]:
        if not word.isascii():
            word = _fold(word)
        if not word.isalnum():
            word = "".join(c for c in word if c.isalnum())
        if word and word not in _KEY_DROPPED:
            kept.append(word)
    if len(kept) > 1 and kept[0] == "the":
        del kept[0]
    return " ".join(kept)


def _lead_number(token: str, start: int) -> tuple[int | None, int]:
    """The 1-4 digit number at token[start:] and where it ends (None: no digits there)."""
    end = start
    limit = min(len(token), start + 5)
    while end < limit and token[end] in _DIGITS:
        end += 1
    if end == start or end - start > 4:
        return None, end
    return int(token[start:end]), end


def _span(first: int, last: int) -> tuple[int, ...]:
    if first <= last and last - first < MAX_RANGE:
        return tuple(range(first, last + 1))
    return (first, last) if first != last else (first,)


def _season_episode(token: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """`s01e02`, `s01e02e03`, `s01e01-e03`, `s01e01-03`, `s01ep01`, `s01`, `s01-s03`.

    (seasons, episodes); episodes is empty for a season pack. None: not this form.
    """
    season, i = _lead_number(token, 1)
    if season is None:
        return None
    size = len(token)
    if i == size:
        return (season,), ()
    if token[i] == "-":
        # s01-s03, s01-03: a multi-season pack.
        j = i + 2 if i + 1 < size and token[i + 1] == "s" else i + 1
        last, end = _lead_number(token, j)
        if last is None or end != size:
            return None
        return _span(season, last), ()
    episodes: list[int] = []
    while i < size:
        char = token[i]
        if char == "e":
            i += 2 if token.startswith("ep", i) else 1
            number, i = _lead_number(token, i)
            if number is None:
                return None
            episodes.append(number)
        elif char == "-" and episodes:
            # e01-e03, e01-03, e01-s01e03: a range to the next number.
            i += 1
            if token.startswith("s", i):
                _again, i = _lead_number(token, i + 1)
            if token.startswith("e", i):
                i += 2 if token.startswith("ep", i) else 1
            number, i = _lead_number(token, i)
            if number is None:
                return None
            episodes[-1:] = _span(episodes[-1], number)
        elif char == "v" and episodes and i + 1 < size and token[i + 1] in _DIGITS:
            break  # s01e05v2: a fansub's version
        else:
            return None
    if not episodes:
        return None
    return (season,), tuple(episodes[:MAX_RANGE])


def _cross(token: str) -> tuple[int, tuple[int, ...]] | None:
    """`2x4`, `01x04`, `1x02x03`, `1x02-03`: (season, episodes); None: not this form."""
    season, i = _lead_number(token, 0)
    if season is None or i > 2 or i >= len(token) or token[i] != "x":
        return None
    episodes: list[int] = []
    size = len(token)
    while i < size:
        char = token[i]
        if char not in "x-":
            return None
        number, end = _lead_number(token, i + 1)
        if number is None or end - i - 1 > 3:
            return None
        if char == "x":
            episodes.append(number)
        else:
            episodes[-1:] = _span(episodes[-1], number)
        i = end
    return season, tuple(episodes[:MAX_RANGE])


def _date(year: int, month: int, day: int) -> datetime.date | None:
    if not 1950 <= year <= _THIS_YEAR + 1 or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None


def _compact_date(token: str) -> datetime.date | None:
    """`20110412` or `110412` (yymmdd) as a date; None: not a date."""
    if len(token) == 8 and token[:2] in ("19", "20"):
        return _date(int(token[:4]), int(token[4:6]), int(token[6:]))
    if len(token) == 6:
        return _date(2000 + int(token[:2]), int(token[2:4]), int(token[4:]))
    return None


def _resolution_suffix(low: str) -> tuple[int, str | None] | None:
    """`bluray720p`, `web1080p`, `hdtv-720p`: the resolution at the end, and the source before it."""
    for suffix in _RES_SUFFIXES:
        if low.endswith(suffix) and len(low) > len(suffix):
            head = low[: -len(suffix)].rstrip("-")
            found = _WORDS.get(head)
            if found is not None and found[0] in (_SRC, _CODEC):
                source = found[1] if found[0] == _SRC else None
                return _WORDS[suffix][1], source  # type: ignore[return-value]
            return None
    return None


def _strip_tags(text: str) -> tuple[str, str | None, bool]:
    """The name without extension, site tags and poster's suffixes; its fansub group; video?"""
    video_file = False
    for _ in range(3):
        head, dot, extension = text.rpartition(".")
        if dot and extension.lower().strip() in _EXTENSIONS and head:
            video_file = video_file or extension.lower() in ("mkv", "mp4", "avi", "m4v", "ts")
            text = head
            continue
        if text.endswith("]"):
            opening = text.rfind("[")
            tag = text[opening + 1 : -1].strip().lower()
            if opening > 0 and (tag in _SITE_TAGS or tag.startswith("www.") or tag.endswith(_DOMAIN_ENDS)):
                text = text[:opening].rstrip(" .-_")
                continue
        head, dash, suffix = text.rpartition("-")
        if dash and suffix.lower() in _SUFFIXES and head and not suffix[:1] in _DIGITS:
            text = head
            continue
        break
    leading = None
    stripped = text.lstrip()
    if stripped.startswith("www.") or stripped.lower().startswith("[ www.") or stripped.lower().startswith("[www."):
        # "www.site.com - Show.S01E01", "[ www.site.org ] - Show.S01E01"
        cut = stripped.find(" - ")
        close = stripped.find("]")
        if stripped.startswith("[") and close > 0:
            text = stripped[close + 1 :].lstrip(" -")
        elif cut > 0:
            text = stripped[cut + 3 :]
    elif stripped.startswith(("[", "【")):
        close = stripped.find("]" if stripped[0] == "[" else "】", 1, 64)
        inner = stripped[1:close].strip() if close > 0 else ""
        low = inner.lower()
        if inner and low not in _WORDS and not ascii_digits(inner) and _resolution_suffix(low) is None:
            leading = inner
            text = stripped[close + 1 :]
    return text, leading, video_file


def _group_suffix(text: str) -> tuple[str, str | None]:
    """The name without its `-GROUP` suffix, and the group."""
    dash = text.rfind("-")
    if dash <= 0:
        return text, None
    group = text[dash + 1 :].strip()
    if not group or len(group) > 30 or " " in group or "." in group:
        return text, None
    low = group.lower()
    # "WEB-DL", "S01E01-E03", "2011-04-12", "x264-720p" end in something that is no group.
    last_piece = text[: dash + 1].translate(_SEPARATORS).split()[-1:] or [""]
    glued = (last_piece[0] + group).lower() if last_piece[0] != "-" else ""
    if (
        low in _WORDS
        or (glued and (glued in _WORDS or _season_episode(glued) or _cross(glued)))
        or ascii_digits(group)
        or (low[0] in "es" and _lead_number(low, 1)[1] == len(low) and len(low) > 1)
        or low.startswith("ep") and ascii_digits(low[2:])
    ):
        return text, None
    return text[:dash], group


@dataclass(slots=True)
class _Reading:
    """What one pass over the tokens found."""

    marker: int = -1  # index of the first token that ends the title
    seasons: tuple[int, ...] = ()
    episodes: tuple[int, ...] = ()
    absolute: tuple[int, ...] = ()
    air_date: datetime.date | None = None
    special: bool = False
    episode_at: int = -1


def parse_release_name(name: str) -> ParsedName:
    """The fields of a release name (see the module docstring)."""
    text, leading_group, video_file = _strip_tags(name[:MAX_NAME_LENGTH])
    text, group = _group_suffix(text)
    if group is None and leading_group is not None:
        group = leading_group
    words = text.translate(_SEPARATORS).split()
    tokens: list[str] = []
    for word in words:
        if "-" in word and len(word) > 1:
            low = word.lower()
            if low not in _WORDS and not _is_dashed_marker(low):
                tokens.extend(part for part in word.split("-") if part)
                continue
        tokens.append(word)
        if len(tokens) >= MAX_TOKENS:
            break
    del tokens[MAX_TOKENS:]
    lows = [token.lower() for token in tokens]

    resolution = source = codec = edition = None
    languages: list[str] = []
    tags: list[str] = []
    proper = repack = complete = False
    version = None
    title_end = len(lows)  # first quality tag after a title word
    seen_title_word = False
    years: list[int] = []  # indexes of year-like tokens
    reading = _Reading()
    numbers: list[int] = []  # indexes of plain numbers, for absolute and 103-style episodes
    dashes: set[int] = set()  # indexes of standalone "-" tokens
    episode_words: list[int] = []
    season_words: list[int] = []
    parts: list[int] = []
    for index, low in enumerate(lows):
        found = _WORDS.get(low)
        if found is not None:
            field, value = found
            if field in _WEAK:
                if not seen_title_word:
                    # A title's own word ("Web Therapy", "Special Ops"): keep reading the title.
                    seen_title_word = True
                    if field != _LANG and field != _EDITION:
                        continue
                    continue
            elif title_end > index:
                title_end = index
            if field == _RES:
                resolution = resolution or value  # type: ignore[assignment]
            elif field == _SRC:
                if source is None or source in ("webdl", "bluray") and value in ("bdrip", "webrip", "remux"):
                    source = value  # type: ignore[assignment]
            elif field == _CODEC:
                codec = codec or value  # type: ignore[assignment]
            elif field == _LANG:
                if value not in languages:
                    languages.append(value)  # type: ignore[arg-type]
            elif field == _EDITION:
                edition = edition or value  # type: ignore[assignment]
            elif field == _FLAG:
                if value == "proper":
                    proper = True
                elif value == "repack":
                    repack = True
            elif field == _TAG:
                if value not in tags:
                    tags.append(value)  # type: ignore[arg-type]
            elif field == _SEASON_WORD:
                season_words.append(index)
            elif field == _EPISODE_WORD:
                episode_words.append(index)
            elif field == _SPECIAL:
                reading.special = True
            elif field == _PART:
                parts.append(index)
            elif field == _COMPLETE:
                complete = True
            continue
        if low == "-":
            dashes.add(index)
            continue
        if len(low) > MAX_TOKEN_LENGTH or low.isalpha():
            seen_title_word = True
            continue
        first = low[0]
        if first in _DIGITS:
            if ascii_digits(low):
                _read_number(low, index, lows, reading, years, numbers)
            elif _read_cross(low, index, reading):
                pass
            elif (glued := _resolution_suffix(low)) is not None:
                resolution = resolution or glued[0]
                if title_end > index:
                    title_end = index
            elif low[-1] in "p" and ascii_digits(low[:-1]) and len(low) <= 5:
                pass  # an odd resolution ("1000p"): not a title word, not a number
            elif "-" in low:
                _read_numbers_range(low, index, reading, numbers)
            elif first in "0123456789" and low.endswith(("bit", "ch", "fps")):
                pass
            else:
                _read_anime_version(low, index, reading, numbers)
                seen_title_word = seen_title_word or _read_ordinal(low)
            continue
        if first == "s" and low[1:2] in _DIGITS:
            found_se = _season_episode(low)
            if found_se is not None:
                _read_season_episode(found_se, index, lows, reading)
                continue
        if first == "e" and low[1:2] in _DIGITS or low.startswith("ep") and low[2:3] in _DIGITS:
            number, end = _lead_number(low, 2 if low[1] == "p" else 1)
            if number is not None and (end == len(low) or low[end] == "v"):
                episode_words.append(-index - 1)  # an "E05" alone: the number is in the token
                continue
        if first == "v" and ascii_digits(low[1:]) and len(low) <= 3:
            version = int(low[1:])
            continue
        if first == "x" and low[1:] in ("264", "265"):
            codec = codec or ("h264" if low[1:] == "264" else "h265")
            continue
        if (glued := _resolution_suffix(low)) is not None:
            resolution = resolution or glued[0]
            source = source or glued[1]
            if title_end > index:
                title_end = index
            continue
        for prefix in ("saison", "season", "staffel", "temporada", "stagione", "series"):
            if low.startswith(prefix):
                number = _number(low[len(prefix) :])
                if number is not None:
                    _set_seasons(reading, (number,), index)
                break
        else:
            if low.startswith("part") or low.startswith("pt"):
                number = _number(low[4:] if low[1] == "a" else low[2:])
                if number is not None:
                    parts.append(-index - 1)
                    continue
            if len(low) == 8 and not (_HEX.issuperset(low) and not low.isalpha()):
                seen_title_word = True
            elif len(low) != 8:
                seen_title_word = True
    _read_words(lows, reading, season_words, episode_words, parts, numbers, years)

    # The title: tokens before the first marker; a movie's last year closes it.
    marker = reading.marker if reading.marker >= 0 else len(lows)
    end = min(marker, title_end)
    year = None
    year_index = -1
    for index in years:
        if index < end or (index == end and reading.marker < 0):
            if index > 0 or _is_year_token(lows, index + 1):
                year_index = index
    if reading.air_date is not None and year_index >= end:
        year_index = -1
    if year_index >= 0:
        year = int(lows[year_index])
    has_episode = bool(reading.seasons or reading.absolute or reading.air_date)
    if year_index >= 0 and not has_episode and year_index <= end:
        end = year_index
        # "Movie (1897) [DVD]": the year's brackets are no part of the title
    title_tokens = tokens[:end]
    while title_tokens and title_tokens[-1] == "-":
        title_tokens.pop()
    title = " ".join(title_tokens)
    if reading.air_date is not None and year is None:
        year = reading.air_date.year

    if resolution is None and source is not None:
        resolution = 480 if source == "bluray" and codec == "xvid" else _SOURCE_RESOLUTION.get(source)
    if resolution is None and codec == "h264" and has_episode:
        resolution = 480  # Sonarr: x264 alone is SDTV
    if version is None and reading.absolute and any(lows[i][-2:-1] == "v" for i in numbers):
        version = None
    if version is not None and version >= 2:
        proper = True

    kind = _kind(reading, leading_group, year, resolution, source, codec, tags, video_file, complete)
    return ParsedName(
        kind=kind,
        title=title,
        title_key=title_key(title),
        year=year,
        seasons=reading.seasons,
        episodes=reading.episodes,
        absolute_episodes=reading.absolute,
        air_date=reading.air_date,
        full_season=bool(reading.seasons) and not reading.episodes and not reading.absolute,
        special=reading.special or (0 in reading.seasons),
        resolution=resolution,
        source=source,
        codec=codec,
        edition=edition,
        languages=tuple(languages),
        group=group,
        proper=proper,
        repack=repack,
        tags=tuple(tags),
        version=version,
    )


def _is_dashed_marker(low: str) -> bool:
    """A dashed token read whole: S01E01-E03, S01-S03, 1x02-03, 01-25 (a range)."""
    first = low[0]
    if first == "s" and low[1:2] in _DIGITS:
        return _season_episode(low) is not None
    if first in _DIGITS:
        if _cross(low) is not None:
            return True
        head, _dash, tail = low.partition("-")
        return ascii_digits(head) and ascii_digits(tail) and len(head) <= 4 and len(tail) <= 4
    return False


def _is_year_token(lows: list[str], index: int) -> bool:
    """Whether lows[index] is a year (a title that is a year, "1917.2019", has one after it)."""
    if index >= len(lows):
        return False
    low = lows[index]
    return len(low) == 4 and ascii_digits(low) and 1890 <= int(low) <= _THIS_YEAR + 2


def _set_seasons(
    reading: _Reading, seasons: tuple[int, ...], index: int, episodes: tuple[int, ...] = ()
) -> None:
    if reading.seasons:
        if episodes and reading.seasons == seasons:
            # S01E01.S01E02 or S01E01 - E02 after the first marker.
            reading.episodes = reading.episodes + tuple(e for e in episodes if e not in reading.episodes)
        return
    reading.seasons = seasons
    reading.episodes = episodes
    if reading.marker < 0 or index < reading.marker:
        reading.marker = index


def _read_season_episode(
    found: tuple[tuple[int, ...], tuple[int, ...]], index: int, lows: list[str], reading: _Reading
) -> None:
    seasons, episodes = found
    if not episodes and index + 1 < len(lows):
        # s03.e05 / s03 ep05: the episode in the next token.
        following = lows[index + 1]
        start = 2 if following.startswith("ep") else 1
        if following[:1] == "e" and ascii_digits(following[start:]) and len(following) - start <= 4:
            episodes = (int(following[start:]),)
    _set_seasons(reading, seasons, index, episodes)


def _read_cross(low: str, index: int, reading: _Reading) -> bool:
    found = _cross(low)
    if found is None:
        return False
    season, episodes = found
    if season <= 99 and all(e < 1000 for e in episodes):
        _set_seasons(reading, (season,), index, episodes)
    return True


def _read_number(
    low: str, index: int, lows: list[str], reading: _Reading, years: list[int], numbers: list[int]
) -> None:
    """A token of ASCII digits: part of a date, a year, or a number kept for later."""
    size = len(low)
    if size == 4 and 1890 <= int(low) <= _THIS_YEAR + 2:
        # 2011.04.12 (a date), or a year.
        if reading.air_date is None and index + 2 < len(lows):
            month, day = lows[index + 1], lows[index + 2]
            if len(month) <= 2 and len(day) <= 2 and ascii_digits(month) and ascii_digits(day):
                found = _date(int(low), int(month), int(day))
                if found is not None:
                    _set_date(reading, found, index)
                    return
        years.append(index)
        numbers.append(index)
        return
    if size == 2 and reading.air_date is None and index + 2 < len(lows):
        # 12.04.2011: day, month, year.
        month, year = lows[index + 1], lows[index + 2]
        if len(month) == 2 and len(year) == 4 and ascii_digits(month) and ascii_digits(year):
            found = _date(int(year), int(month), int(low))
            if found is not None:
                _set_date(reading, found, index)
                return
    if size in (6, 8) and reading.air_date is None:
        found = _compact_date(low)
        if found is not None:
            _set_date(reading, found, index)
            return
    if size <= 4:
        numbers.append(index)


def _set_date(reading: _Reading, found: datetime.date, index: int) -> None:
    reading.air_date = found
    if reading.marker < 0 or index < reading.marker:
        reading.marker = index


def _read_numbers_range(low: str, index: int, reading: _Reading, numbers: list[int]) -> None:
    """`01-25` (absolute episodes or seasons, decided later)."""
    numbers.append(index)


def _read_anime_version(low: str, index: int, reading: _Reading, numbers: list[int]) -> None:
    """`09v2`: an absolute number with its fansub version; `12.5` was split already."""
    head, vee, tail = low.partition("v")
    if vee and ascii_digits(head) and len(head) <= 4 and ascii_digits(tail) and len(tail) == 1:
        numbers.append(index)


def _read_ordinal(low: str) -> bool:
    """`1st`, `2nd`, `300-nen`: words of a title, not numbers."""
    return True


def _numbers_of(low: str) -> tuple[int, ...] | None:
    """A plain number, `09v2`, or a range `01-25`, as numbers; None: none of those."""
    if ascii_digits(low):
        return (int(low),) if len(low) <= 4 else None
    head, dash, tail = low.partition("-")
    if dash:
        if ascii_digits(head) and ascii_digits(tail) and len(head) <= 4 and len(tail) <= 4:
            return _span(int(head), int(tail))
        return None
    head, vee, tail = low.partition("v")
    if vee and ascii_digits(head) and len(head) <= 4:
        return (int(head),)
    return None


def _read_words(
    lows: list[str],
    reading: _Reading,
    season_words: list[int],
    episode_words: list[int],
    parts: list[int],
    numbers: list[int],
    years: list[int],
) -> None:
    """Markers written in words or numbers alone, read after the pass (they need its result)."""
    size = len(lows)
    # "Season 01", "Season 01 Episode 05", "Saison 3", "Seasons 1-3".
    for index in season_words:
        if index + 1 < size:
            found = _numbers_of(lows[index + 1])
            if found is not None and all(n < 100 for n in found):
                episodes: tuple[int, ...] = ()
                after = index + 2
                if after + 1 < size and _WORDS.get(lows[after], ("",))[0] == _EPISODE_WORD:
                    episodes = _numbers_of(lows[after + 1]) or ()
                    episode_words = [i for i in episode_words if i != after]
                _set_seasons(reading, found, index, episodes)
                break
    # "Episode 05", "Ep08", "E1135": with a season, that season's episode; alone, absolute.
    for index in episode_words:
        if index < 0:
            at = -index - 1
            low = lows[at]
            number, _end = _lead_number(low, 2 if low[1] == "p" else 1)
            found = (number,) if number is not None else None
        else:
            at = index
            found = _numbers_of(lows[index + 1]) if index + 1 < size else None
        if found is None:
            continue
        if reading.seasons and not reading.episodes:
            if at <= reading.marker + 2:
                reading.episodes = found
        elif not reading.seasons and not reading.air_date and not reading.absolute:
            reading.absolute = found
            if reading.marker < 0 or at < reading.marker:
                reading.marker = at
        break
    if reading.seasons or reading.air_date:
        return
    # "Part01", "Part 2": a mini-series' episode, when no year says movie.
    if parts and not years and not reading.absolute:
        index = parts[0]
        at = -index - 1 if index < 0 else index
        low = lows[at]
        found = (
            _numbers_of(low[4:] if low.startswith("part") else low[2:])
            if index < 0
            else (_numbers_of(lows[at + 1]) if at + 1 < size else None)
        )
        if found is not None and all(n < 100 for n in found):
            _set_seasons(reading, (1,), at, found)
            return
    if reading.absolute:
        return
    # "Show - 13", "Show - 013", "[Group] Show 13 [1080p]", "Show - 01-12": absolute numbers.
    for index in numbers:
        if index == 0:
            continue
        low = lows[index]
        if lows[index - 1] == "-" or (index >= 2 and lows[index - 2] == "-" and False):
            found = _numbers_of(low)
            if found is not None and (len(low) != 4 or index not in years):
                reading.absolute = found
                if reading.marker < 0 or index - 1 < reading.marker:
                    reading.marker = index - 1 if index - 1 > 0 else index
                return
    # "Title.103.720p" is S01E03, "Title.1013" S10E13: three or four digits
    # after a title, never a year or a resolution.
    for index in numbers:
        if index == 0:
            continue
        low = lows[index]
        if len(low) in (3, 4) and ascii_digits(low) and index not in years:
            value = int(low)
            if value in _RESOLUTION_NUMBERS or value % 100 == 0:
                continue
            _set_seasons(reading, (value // 100,), index, (value % 100,))
            return


def _kind(
    reading: _Reading,
    leading_group: str | None,
    year: int | None,
    resolution: int | None,
    source: str | None,
    codec: str | None,
    tags: list[str],
    video_file: bool,
    complete: bool,
) -> str:
    video = resolution is not None or source is not None or codec is not None or video_file
    if reading.absolute:
        return "anime"
    if reading.seasons or reading.air_date:
        if leading_group is not None or "anime" in tags:
            return "anime"
        return "tv"
    if not video:
        if "audiobook" in tags:
            return "audio"
        if "music_video" in tags:
            return "audio"
        if "lossless" in tags or "mp3" in tags:
            return "audio"
        if "ebook" in tags or "comic" in tags:
            return "book"
        if "game" in tags or "software" in tags:
            return "software"
    elif "music_video" in tags:
        return "audio"
    if year is not None or video or "3d" in tags or "disc" in tags:
        return "movie"
    return "other"


__all__ = [
    "FIELDS_VERSION",
    "KINDS",
    "MAX_NAME_LENGTH",
    "MAX_TOKENS",
    "ParsedName",
    "parse_release_name",
    "title_key",
]
