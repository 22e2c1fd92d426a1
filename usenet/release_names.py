"""Release names read the way Sonarr and Radarr read them: title, year, season, episode, quality.

`parse_release_name(name)` turns a scene, p2p or fansub release name into a
`ParsedName`. It is Django-free and uses no regular expressions: the name is
cut to `MAX_NAME_LENGTH` characters, split once into at most `MAX_TOKENS`
tokens (one translate, one split), and each token is classified by a
dictionary lookup or, for the few that hold digits, by a scan bounded by
its length. Every token is looked at a bounded number of times and a range
lists at most `MAX_RANGE` numbers, so a name costs time linear in its
length, and a 10 KB name costs what its first `MAX_NAME_LENGTH` characters
cost.

How a name is read (the rules Sonarr's and Radarr's parsers follow, written
as one pass over tokens instead of backtracking patterns):

- Tags around the name go first: a file extension (`.mkv`, `.nzb`), a
  site's tag glued after the group (`-GROUP[rarbg]`), a poster's suffix
  (`-Obfuscated`), a fansub's `[Group]` at the start (or, after a space, at
  the end), then the `-GROUP` suffix.
- The title is every token before the first marker: an episode marker
  (`S01E02`, `1x02`, `Season 1`, a date), a quality tag (`720p`, `BluRay`,
  `x264`), or, for a movie, the last year before those (`2001.A.Space.Odyssey
  .1968` is "2001 A Space Odyssey", 1968); tags at its end (`German DL`,
  `EXTENDED`) are trimmed off, but a language's name right before a movie's
  year is the title's (`The.Good.German.2006`) unless the title opens with
  that language's article (`Der.Film.deines.Lebens.German.2011`). A TV
  title keeps its year (`Show.2010.S01E01` is "Show 2010"); its key
  (`title_key`) drops a year or country code that ends it, so Sonarr's
  "Show (2010)" and "Show" both meet it. A date opening
  the name comes before the title (`221208 Show ep11`). A title written in
  two scripts is the part in Latin letters after the other
  (`我的人间烟火.Fireworks.Series.S01E01`, `Енола Голмс / Enola Holmes`, and
  `Босх: Спадок (S2E1) / Series: Legacy (S2E1)`: the title after the " / "),
  as Sonarr searches by its series' Latin title.
- Numbering: `S01E02`, `S01E02E03`, `S01E01-E03` (a range), `S6E02`,
  `s03.e05`, `S01EP01`, `1x02`, `1x02x03`, `2x09-2x10`, `Season 01 Episode
  05`, `Saison3`, `S01`, `S01-S03`, three to five digits after the title
  (`Title.103.720p` is S01E03, never a year or a resolution), dates
  (`2011.04.12`, `2011-04-12`, `12.04.2011`, `20110412`, `110412`, `23rd Feb
  2024`), absolute numbers (`[Group] Show - 13 [1080p]`, `Show - 013`,
  `Show Ep08`, `第05话`) and specials (`S00E05`, `OVA`, `NCOP`). A number that
  reads two ways is given both: `Show E05` and `Show - 130 - Title` carry the
  absolute number and S01E05 / S01E30, so a search by either finds them.
  Also (forms the held-out corpus found): a season's discs or extras
  (`S07D1`, `S01Extras`: packs), `S06xE01`, `s03-x01`, `1xAll`, `5of9` and
  `5 of 9` (after a season word `Season.3of5` is the season, and
  `Season.2.1of4` its episode), `03-29-2012`, `Seizoen 4`, `Saison VII`, a
  padded number after the title (`Show.05.Episode.Title`) or opening the
  name (`003. Show - Title`, `[Group] 01 - Show`; never with a year).
- Kind: an episode makes TV, and anime when its numbering is absolute or
  its name is a fansub's (opens with its `[Group]`; a `[Tag]` at the end
  names a group, but scene and p2p names end in one too); a year, an
  edition or a video quality alone makes a movie; audio, book and software
  tags decide only where nothing says video, so `AAC`, `FLAC` or `v2` in an
  anime name keep it anime.
- Resolutions are read glued (`Bluray720p`), as sizes (`1920x1080`), with a
  frame rate (`1080p24`), or bare beside a quality tag or a width (`720.HDTV`,
  `1280*720`, `[1080.Hi10p]`).
- Quality as Sonarr and Radarr settle it: a source without a resolution has
  the one they assume (BluRay 720p, HDTV and WEB-DL SD), a camera copy is SD,
  a BluRay with a disc's codec and no encoder is a whole disc (`disc` tag).

Every season, episode and absolute number given is at most `MAX_NUMBER`
(32767, the catalog's smallint): a larger one in a name is no number.
Numbers are ASCII digits 0-9 only ("²" and Arabic-Indic digits are letters
here); they are read through `usenet.numbers.ascii_digits` (full-width
digits, which CJK names use, are mapped to ASCII ones first).

The interface (`ParsedName`, `parse_release_name`, `KINDS`, `FIELDS_VERSION`)
is what the catalog stores and searches on; bump `FIELDS_VERSION` whenever a
change to the parser can change a stored field, so the backfill command
(`manage.py parse_release_names`) knows which releases to parse again.
`title_key(text)` is the key a title is matched on; a search applies it to
the query the client sent (Sonarr's cleaned series title) to match it.
`usenet.categories.category_from_fields` decides a category from the fields.

`make install` and `pip install .` compile this module with mypyc (setup.py;
`COMPILED` says whether it runs compiled): keep it typed precisely, its
constants `Final`, its classes plain (ParsedName lives in usenet/parsed_name.py,
never compiled), and no closures in the parse. Both read every name alike
(tests/usenet/test_release_names_compiled.py; bench/names_equivalence.py
--ref worktree).
"""

from __future__ import annotations

import datetime
import types
import unicodedata
from typing import Any, Final

from .numbers import ascii_digits
from .parsed_name import ParsedName

# Bump when the parser changes what it returns for some name.
FIELDS_VERSION: Final = 5

MAX_NAME_LENGTH: Final = 512
MAX_TOKENS: Final = 64
# Longer tokens are words to this parser (never a number or a marker).
MAX_TOKEN_LENGTH: Final = 32
# A range such as S01E01-E99 or S01-S30 lists at most this many numbers.
MAX_RANGE: Final = 250
# The largest season, episode or absolute number given: the catalog stores them as
# smallint[] (a larger one would fail the batch's INSERT), so a larger one is no number.
MAX_NUMBER: Final = 32_767

KINDS: Final = ("tv", "movie", "anime", "audio", "book", "software", "other")


_DIGITS: Final = frozenset("0123456789")
# What splits a name into words: ASCII separators, CJK brackets (lenticular, corner,
# full-width, tortoise-shell and angle), spaces nobody sees (a zero-width one must
# not glue two words). "~" joins a range (01~10); full-width digits (CJK names) are
# written as the ASCII ones they are, and no other digits are read.
_SEPARATOR_MAP: Final[dict[str, str]] = {
    **{c: " " for c in '._[](){}+,;_"|/\\*?:<>\t\r\n\x00'},
    **{c: " " for c in "\u3010\u3011\u300c\u300d\u300e\u300f\uff08\uff09\u3014\u3015\u300a\u300b"},
    **{c: " " for c in "\u00a0\u200b\u200c\u200d\u2060\ufeff\u3000"},
    "\u00b7": " ",  # a middle dot between two titles ("名侦探柯南·Series Title")
    "~": "-",
    **{chr(0xFF10 + n): str(n) for n in range(10)},
}
_NON_ASCII_SEPARATORS: Final = tuple((k, v) for k, v in _SEPARATOR_MAP.items() if not k.isascii())
# The same table for ASCII text, as bytes (bytes.translate is several times faster).
_ASCII_SEPARATORS: Final = bytes.maketrans(
    "".join(k for k in _SEPARATOR_MAP if k.isascii()).encode("ascii"),
    "".join(v for k, v in _SEPARATOR_MAP.items() if k.isascii()).encode("ascii"),
)
_APOSTROPHES: Final = frozenset("'\u2019`\u00b4")
_KEY_DROPPED: Final = frozenset(("and", "&"))
# Country codes that end a series title ("The Office (US)", "Shark Tank AU"); title_key drops them.
_KEY_COUNTRIES: Final = frozenset(("us", "uk", "au", "nz", "ca"))
_CENTURIES: Final = frozenset(("19", "20"))  # the years title_key drops: 1900-2099
_SUFFIX_ENDS: Final = _KEY_COUNTRIES | {f"{n:02d}" for n in range(100)}

# What a token means, looked up once per token. (field, value).
_RES: Final = "res"
_SRC: Final = "src"
_CODEC: Final = "codec"
_AUDIO: Final = "audio"  # an audio track's format: AAC, AC3, DTS; says nothing about the kind
_LANG: Final = "lang"
_EDITION: Final = "edition"
_FLAG: Final = "flag"  # proper, repack, and words that end a title but carry no field
_TAG: Final = "tag"  # a category hint (see ParsedName.tags)
_SEASON_WORD: Final = "season"
_EPISODE_WORD: Final = "episode"
_SPECIAL: Final = "special"
_PART: Final = "part"

# A word's field and value: the value is an int (a resolution) or a str.
_WORDS: Final[dict[str, tuple[str, Any]]] = {}


def _add(field: str, words: str, value: Any = None) -> None:
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
_add(_SRC, "bluray blu-ray bd bdmux hddvd hd-dvd uhdbd mbluray", "bluray")
_add(_SRC, "bdremux uhdremux bd-remux", "remux")
_add(_SRC, "bdrip bdlight brrip bd-rip br-rip uhdbdrip", "bdrip")
_add(_SRC, "remux", "remux")
_add(
    _SRC,
    "web-dl webdl web webdlrip web-dlrip webdlmux amazonhd amazonsd itunes ituneshd netflixhd"
    " netflixuhd webhd maxdomehd hbomaxhd disneyhd",
    "webdl",
)
_add(_SRC, "webrip web-rip webmux hdrip", "webrip")
_add(_SRC, "hdtv hdtvrip ahdtv uhdtv", "hdtv")
_add(_SRC, "pdtv sdtv dsr dsrip tvrip satrip dthrip dvb", "sdtv")
_add(_SRC, "dvdrip dvd dvdr dvd-r dvd5 dvd9 dvdscr ntsc pal xvidvd r5 dvd-rip mdvdr", "dvd")
_add(
    _SRC,
    "cam camrip hdcam hqcam hdcamrip hqcamrip newcam ts tsrip telesync telesynch hdts tc"
    " telecine workprint scr screener",
    "cam",
)
_add(_SRC, "rawhd raw-hd", "rawhd")
_add(_CODEC, "x264 h264 avc x.264 h.264", "h264")
_add(_CODEC, "x265 h265 hevc", "h265")
_add(_CODEC, "xvid divx xvidhd", "xvid")
_add(_CODEC, "mpeg2 mpeg-2", "mpeg2")
_add(_CODEC, "mvc", "mvc")
_add(_CODEC, "vc1 vc-1", "vc1")
_add(_CODEC, "av1", "av1")
_add(_CODEC, "vp9", "vp9")
_add(
    _AUDIO,
    "aac aac2 aac5 ac3 eac3 e-ac3 dd dd2 dd5 ddp ddp2 ddp5 dd+ dts dts-hd dtshd dts-x dtsx dts-ma"
    " truehd atmos flac2 lpcm pcm opus dual-audio dualaudio",
)
_add(
    _FLAG,
    "ws internal limited readnfo nfofix subbed subs hardsub hardsubs hc dubbed dub"
    " hdr hdr10 hdr10+ dv dovi sdr 10bit 10-bit 8bit hi10p hi10 10bits"
    " amzn nf dsnp hmax atvp hulu pcok stan it ma cr funi vrv"
    " multisubs multi-subs sub vostfr vosten mkv mp4 avi rarbg eztv ettv"
    " 3ch 6ch 2ch 60fps 50fps 24fps nordic dl ml hr incl",
)
_add(_FLAG, "proper real", "proper")
_add(_FLAG, "repack rerip repack2 rerip2", "repack")
_add(_TAG, "3d hsbs h-sbs sbs hou h-ou half-sbs half-ou", "3d")
_add(
    _TAG,
    "bdmv bd25 bd50 bd66 bd100 bd-25 bd-50 bd-66 bdiso br-disk brdisk avchd complete-bluray",
    "disc",
)
_add(_TAG, "documentary docu doku documental docuseries", "documentary")
_add(_TAG, "audiobook audiobooks abook m4b unabridged abridged", "audiobook")
_add(_TAG, "flac alac ape wav lossless 24bit 16bit 24-bit 16-bit cdda vinyl hi-res", "lossless")
_add(
    _TAG,
    "mp3 320kbps 256kbps 192kbps 128kbps v0 cbr320 320 m4a ogg 320k vbr discography album cdm cds",
    "mp3",
)
_add(_TAG, "mvid musicvideo", "music_video")
_add(_TAG, "epub mobi azw azw3 ebook e-book ebooks pdf retail", "ebook")
_add(_TAG, "cbr cbz comic comics", "comic")
_add(_TAG, "codex skidrow plaza reloaded flt fitgirl tenoke rune empress dodi razor1911", "game")
_add(_TAG, "iso exe msi dmg x64 x86 win64 win32 macos osx linux keygen portable setup", "software")
_add(_TAG, "anime", "anime")
_add(_TAG, "batch", "batch")
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
    ("Directors Cut", "directors"),
    ("Restored", "restored"),
):
    _add(_EDITION, _words, _edition)
_add(
    _SEASON_WORD,
    "season seasons saison saisons staffel temporada tem temp stagione se sezon series seizoen",
    "season",
)
_add(_EPISODE_WORD, "episode episodes ep episodio folge cap afl bolum bölüm blm", "episode")
_add(_SPECIAL, "special specials ova oad ona ovas oads onas ncop nced", "special")
_add(_PART, "part pt", "part")
_add(_TAG, "complete completa completo", "complete")

# Tags that end a title wherever they stand (but as its first word).
_STRONG: Final = frozenset((_RES, _SRC, _CODEC))
# Numbering words, read after the pass.
_MARKS: Final = frozenset((_SEASON_WORD, _EPISODE_WORD, _PART))
# Tags trimmed off a title's end ("Movie German DL", "Show EXTENDED").
_TRIMMED: Final = frozenset((_AUDIO, _LANG, _EDITION, _FLAG))
_TRIMMED_TAGS: Final = frozenset(("complete", "batch"))
# Tags that count even as a title's word ("Nature Documentary", "BD25 Movie",
# "Author-Title-AUDIOBOOK-WEB-2022").
_TITLE_TAGS: Final = frozenset(("disc", "documentary", "audiobook"))
# A later source that says more than an earlier one (WEB then WEBRip is a WEBRip).
_BETTER_SOURCE: Final = {
    "webdl": ("webrip",),
    "bluray": ("bdrip", "remux"),
    "dvd": ("bluray", "bdrip", "remux", "webdl", "webrip", "hdtv"),
    "sdtv": ("hdtv", "webdl", "webrip", "bluray", "bdrip", "remux"),
}
_CODEC_NUMBERS: Final = {"264": "h264", "265": "h265"}
# What follows a season's disc number: S07D1, S07D1-3&5.
_DISC_TAIL: Final = frozenset("d0123456789-&")
_RESOLUTION_ALIASES: Final = frozenset(("4k", "uhd", "fhd", "sd"))
# A disc's own codecs; x264, H.265, XviD are an encoder's.
_DISC_CODECS: Final = frozenset(("avc", "hevc", "vc1", "vc-1", "mpeg2", "mpeg-2", "mvc"))
# A season's number in Roman numerals ("Saison VII"), read only after a season word.
_ROMAN: Final = {
    numeral: value
    for value, numeral in enumerate(
        "i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx".split(), start=1
    )
}
_NUMBER_WORDS: Final = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
# Words after their number: "60.Bolum" (Turkish), "1.Bölüm".
_EPISODE_AFTER: Final = frozenset(("bolum", "bölüm", "blm"))
# A CJK episode's mark after its number: 話/话 (episode), 集 (part), 完 (the last).
_CJK_EPISODE: Final = frozenset("話话集完")
_GLUED_SEASON: Final = (
    "saison", "season", "staffel", "temporada", "stagione", "series", "sezon", "seizoen",
)  # fmt: skip
# Heights read as a resolution when bare beside a quality tag or a width ("1280*720").
_BARE_RESOLUTIONS: Final = frozenset(("480", "576", "720", "1080", "2160"))
_WIDTHS: Final = frozenset(
    ("640", "704", "720", "848", "854", "960", "1024", "1280", "1920", "3840")
)
# Resolutions that are never an episode number ("Show.720.HDTV").
_RESOLUTION_NUMBERS: Final = frozenset((360, 480, 540, 576, 720, 1080, 1440, 2160))
# Glued forms: "Bluray720p", "WEB1080p", "x264-720p" read their resolution from the end.
# The resolution a source implies when the name gives none (Sonarr's defaults).
_SOURCE_RESOLUTION: Final = {
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
_VIDEO_EXTENSIONS: Final = frozenset(
    "mkv mp4 avi m4v wmv mov mpg mpeg ts m2ts webm flv ogm".split()
)
_EXTENSIONS: Final = _VIDEO_EXTENSIONS | frozenset("nzb par2 nfo rar zip srt sub idx".split())
_POSTER_SUFFIXES: Final = frozenset(
    "obfuscated scrambled postbot xpost asrequested rp sample rakuv rakuvfinhel".split()
)
_SITE_TAGS: Final = frozenset(
    "rarbg eztv ettv tgx eztv.re eztv.io rartv vtv publichd ettv.to 1337x yts yts.mx yify".split()
)
# What a fansub's name opens with, its [Group] inside.
_OPENING_BRACKETS: Final = ("[", "\u3010")
# What a name that states a site or a fansub's group opens with: "www.", "[", "【".
_LEADING_MARKS: Final = frozenset("[\u3010wW")
_DOMAIN_ENDS: Final = (".com", ".org", ".net", ".to", ".me", ".info", ".re", ".io", ".cc", ".tv")

_THIS_YEAR: Final = datetime.date.today().year


def _fold(word: str) -> str:
    """Letters without their accents ("é" → "e"), for a key a plain-ASCII query matches."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def title_key(text: str) -> str:
    """The key a title is matched on: lower-case words of letters and digits, one space apart.

    It is built so that a release name and Sonarr's cleaned search title for
    the same series meet (Sonarr drops a leading "The", writes "&" as "and",
    deletes apostrophes and dots, and sends the rest as words): a leading
    "the" is dropped; "&" and "and" are dropped, so "Law & Order", "Law and
    Order" and "Law.and.Order" meet; apostrophes join their word ("Grey's" is
    "greys"); single letters in a row join ("S.H.I.E.L.D." is "shield", as
    Sonarr's "SHIELD"); accents fold ("Pokémon" is "pokemon"); a year and a
    country code that end a longer title are dropped ("Doctor Who (2005)",
    "The Office (US)" are "doctor who", "office"), because names and Sonarr's
    query each give or leave them out ("Doctor.Who.S01E01", "The.Office.(US).
    2005.S02E01"); Sonarr tells such series apart from the year and country it
    reads itself. A season word in it loses its padding ("Title S02" is
    Sonarr's "Title S2"). A search applies it to the query to compare.
    """
    words = _split(text[:MAX_NAME_LENGTH].lower())
    del words[MAX_TOKENS:]
    return _key(words)


def _key(lows: list[str]) -> str:
    """title_key of words already split and in lower case."""
    joined = " ".join(lows)
    if joined.isascii() and joined.replace(" ", "").isalnum():
        kept = lows  # letters and digits only, the common case
    else:
        kept = []
        for word in lows:
            if not (word.isalnum() and word.isascii()):
                if not word.isascii():
                    word = _fold(word)
                # Apostrophes join ("grey's"), anything else that is no letter or digit splits.
                word = "".join(
                    "" if c in _APOSTROPHES else c if c.isalnum() else " "
                    for c in word[:MAX_TOKEN_LENGTH]
                )
                kept.extend(word.split())
            else:
                kept.append(word)
        joined = " ".join(kept)
    if "and" in kept or "&" in kept:
        kept = [word for word in kept if word not in _KEY_DROPPED]
        joined = " ".join(kept)
    if len(kept) > 1 and kept[0] == "the":
        kept = kept[1:]
    if len(kept) > 1 and 1 in map(len, kept):
        kept = _join_letters(kept)
        joined = " ".join(kept)
    if "s0" in joined:
        # "Title S02" is Sonarr's "Title S2" (an anime series named by its season).
        kept = [_unpadded_season(word) for word in kept]
    # `joined` ends as `kept` does: its last two letters rule out most words at once.
    if joined[-2:] in _SUFFIX_ENDS and len(kept) > 1:
        if _is_title_suffix(kept[-1]):
            kept = kept[:-1]
            if len(kept) > 1 and _is_title_suffix(kept[-1]):
                kept = kept[:-1]  # "The Office (US) (2005)"
    return " ".join(kept)


def _unpadded_season(word: str) -> str:
    if len(word) > 2 and word[:2] == "s0" and ascii_digits(word[2:]):
        return "s" + str(int(word[1:]))
    return word


def _is_title_suffix(word: str) -> bool:
    """A year (1900-2099, fixed so a key never changes with the date) or a country code."""
    if len(word) == 4:
        return word[:2] in _CENTURIES and ascii_digits(word[2:])
    return word in _KEY_COUNTRIES


def _join_letters(words: list[str]) -> list[str]:
    """S H I E L D is "shield": single letters in a row are one word (a lone one stays)."""
    out: list[str] = []
    run = ""
    for word in words:
        if len(word) == 1 and word.isalpha():
            run += word
            continue
        if run:
            out.append(run)
            run = ""
        out.append(word)
    if run:
        out.append(run)
    return out


def _lead_number(token: str, start: int, digits: int = 4) -> tuple[int | None, int]:
    """The number of 1 to `digits` digits at token[start:], at most MAX_NUMBER, and where it
    ends (None: none)."""
    end = start
    limit = start + digits + 1
    if limit > len(token):
        limit = len(token)
    while end < limit and token[end] in _DIGITS:
        end += 1
    if end == start or end - start > digits:
        return None, end
    number = int(token[start:end])
    return (number, end) if number <= MAX_NUMBER else (None, end)


def _span(first: int, last: int) -> tuple[int, ...]:
    if first <= last and last - first < MAX_RANGE:
        return tuple(range(first, last + 1))
    return (first, last) if first != last else (first,)


def _season_episode(token: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """`s01e02`, `s01e02e03`, `s01e01-e03`, `s01e01-03`, `s01ep01`, `s01e05v2`, `s06e01b`,
    `s01`, `s01-s03`: (seasons, episodes), episodes empty for a season pack; None: not this form.
    """
    size = len(token)
    if size == 6 and token[3] == "e" and _DIGITS.issuperset(token[1:3] + token[4:]):
        return (int(token[1:3]),), (int(token[4:]),)  # s01e05, the common form
    season, i = _lead_number(token, 1)
    if season is None:
        return None
    if i == size:
        return (season,), ()
    if token.startswith("extras", i) or (
        token[i] == "d" and token[i + 1 : i + 2] in _DIGITS and _DISC_TAIL.issuperset(token[i:])
    ):
        return (season,), ()  # s01extras, s07d1, s07d1-3&5: a season's extras or discs
    if token[i] == "x" and token[i + 1 : i + 2] == "e":
        i += 1  # s06xe01
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
            number, i = _lead_number(token, i, 5)
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
            number, i = _lead_number(token, i, 5)
            if number is None:
                return None
            episodes[-1:] = _span(episodes[-1], number)
        elif episodes and i == size - 1 and char in "abcd":
            break  # s06e01b: the second half of a split episode
        elif char == "v" and episodes and ascii_digits(token[i + 1 :]):
            break  # s01e05v2: a fansub's version
        else:
            return None
    if not episodes:
        return None
    return (season,), tuple(episodes[:MAX_RANGE])


def _cross(token: str) -> tuple[int, tuple[int, ...]] | None:
    """`2x4`, `01x04`, `1x02x03`, `1x02-03`, `2x09-2x10`, `1x01-x03`, `2009x09`:
    (season, episodes); None: not this form (`1280x720` is a resolution)."""
    season, i = _lead_number(token, 0)
    if season is None or i >= len(token) or token[i] != "x":
        return None
    if i > 2 and not 1900 <= season <= _THIS_YEAR + 1:
        return None
    episodes: list[int] = []
    size = len(token)
    while i < size:
        char = token[i]
        if char not in "x-":
            return None
        i += 1
        if char == "-" and token.startswith("x", i):
            i += 1  # 1x01-x03
        number, end = _lead_number(token, i, 3)
        if number is None:
            return None
        if char == "-" and end < size and token[end] == "x":
            # 2x09-2x10: the season again, then the episode.
            number, end = _lead_number(token, end + 1, 3)
            if number is None:
                return None
        if char == "x" or not episodes:
            episodes.append(number)
        else:
            episodes[-1:] = _span(episodes[-1], number)
        i = end
    if season == 1920 and episodes[0] >= 200:
        return None  # 1280x534: a picture's size
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


def _frame_rate_resolution(low: str) -> int | None:
    """`1080p24`, `720p50`: a resolution with its frame rate glued on."""
    at = low.find("p")
    if at < 3 or not 1 <= len(low) - at - 1 <= 3 or not ascii_digits(low[at + 1 :]):
        return None
    found = _WORDS.get(low[: at + 1])
    return found[1] if found is not None and found[0] == _RES else None


def _resolution_suffix(low: str) -> tuple[int, str | None] | None:
    """`bluray720p`, `web1080p`, `hdtv-720p`: the resolution at the end, and the source before it."""
    if low[-1:] not in ("p", "i") or low[-2:-1] not in _DIGITS:
        return None
    start = len(low) - 2
    while start > 0 and len(low) - start < 6 and low[start - 1] in _DIGITS:
        start -= 1
    resolution = _WORDS.get(low[start:])
    if resolution is None or resolution[0] != _RES or start == 0:
        return None
    head = low[:start].rstrip("-")
    found = _WORDS.get(head)
    if found is None or found[0] not in (_SRC, _CODEC):
        return None
    return resolution[1], found[1] if found[0] == _SRC else None


def _strip_tags(text: str) -> tuple[str, str | None, str]:
    """The name without extension, site tags and poster's suffixes; its fansub group; its
    video file's extension ("" where none)."""
    video_file = ""
    for _ in range(4):
        dot = text.rfind(".", len(text) - 6)  # extensions are at most 4 letters, with a space
        if dot > 0:
            extension = text[dot + 1 :].strip().lower()
            if extension in _EXTENSIONS:
                if extension in _VIDEO_EXTENSIONS and not video_file:
                    video_file = extension
                text = text[:dot]
                continue
        if text[-1:] == "]":
            opening = text.rfind("[")
            tag = text[opening + 1 : -1].strip().lower()
            if opening > 0 and (
                tag in _SITE_TAGS or tag.startswith("www.") or tag.endswith(_DOMAIN_ENDS)
            ):
                text = text[:opening].rstrip(" .-_")
                continue
        dash = text.rfind("-", len(text) - 14)  # a poster's suffix is at most 12 letters
        if dash > 0 and text[dash + 1 :].lower() in _POSTER_SUFFIXES:
            text = text[:dash]
            continue
        break
    stripped = text.lstrip()
    if stripped[:1] not in _LEADING_MARKS and text[-1:] != "]":
        return text, None, video_file  # no site, no fansub's group: the common case
    leading = None
    low = stripped[:6].lower()
    if low.startswith(("www.", "[ www", "[www.")):
        # "www.site.com - Show.S01E01", "[ www.site.org ] - Show.S01E01"
        close = stripped.find("]") if low[0] == "[" else -1
        cut = stripped.find(" - ")
        if close > 0:
            text = stripped[close + 1 :].lstrip(" -")
        elif cut > 0:
            text = stripped[cut + 3 :]
    elif low[:1] in ("[", "【"):
        close = stripped.find("]" if low[0] == "[" else "】", 1, 64)
        inner = stripped[1:close].strip() if close > 0 else ""
        # A group is printable: no NUL (PostgreSQL's text holds none), control character
        # or lone surrogate (no UTF-8 encodes one).
        if (
            inner
            and inner.isprintable()
            and not _is_quality(inner.lower())
            and not ascii_digits(inner)
        ):
            leading = inner
            text = stripped[close + 1 :]
    elif text.endswith("]"):
        # "Show - S01E01 - (BD 1080p) [Group]": a fansub's group at the end, after a space.
        opening = text.rfind("[", len(text) - 34)
        inner = text[opening + 1 : -1]
        if (
            opening > 0
            and text[opening - 1] in " ._"
            and inner.isalnum()
            and not ascii_digits(inner)
        ):
            if not _is_quality(inner.lower()) and not _is_marker(inner.lower()):
                leading = inner
                text = text[:opening]
    return text, leading, video_file


def _is_quality(low: str) -> bool:
    found = _WORDS.get(low)
    return (found is not None and found[0] in _STRONG) or _resolution_suffix(low) is not None


def _group_of(word: str) -> tuple[str, str | None]:
    """The last word without its `-GROUP` suffix, and the group; (word, None) where it has none."""
    head, dash, group = word.rpartition("-")
    if not dash or not group or len(group) > 30 or not group.isalnum():
        return word, None
    low = group.lower()
    # "WEB-DL", "S01E01-E03", "2011-04-12", "x264-720p" end in something that is no group.
    glued = head.rpartition("-")[2].lower() + "-" + low if head else ""
    if (
        low in _WORDS
        or ascii_digits(group)
        or _is_marker(low)
        or (glued and (glued in _WORDS or _is_marker(glued)))
        or _resolution_suffix(low) is not None
    ):
        return word, None
    return head, group


def _is_marker(low: str) -> bool:
    """S01E02, S01, E02, Ep02, 1x02: numbering, never a group."""
    first = low[:1]
    if first == "s" and low[1:2] in _DIGITS:
        return _season_episode(low) is not None
    if first == "e":
        start = 2 if low[1:2] == "p" else 1
        return ascii_digits(low[start:])
    if first in _DIGITS:
        return _cross(low) is not None
    return False


def _split(text: str) -> list[str]:
    """The words of a text split at separators: one translate and one split."""
    if text.isascii():
        # bytes.translate is several times faster than str.translate.
        return text.encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii").split()
    # str.translate looks each character up in a dict (16 us for 100 Cyrillic
    # letters). ASCII bytes never occur inside a UTF-8 sequence, so the ASCII
    # separators go as bytes; the few others are replaced where they occur.
    data = text.encode("utf-8", "surrogatepass").translate(_ASCII_SEPARATORS)
    text = data.decode("utf-8", "surrogatepass")
    for char, replacement in _NON_ASCII_SEPARATORS:
        if char in text:
            text = text.replace(char, replacement)
    return text.split()


def _tokens(words: list[str]) -> list[str]:
    """The tokens of a name's words, at most MAX_TOKENS: a dashed word splits where it joins
    tags or numbers ("x264-720p", "Title-01", "Show-S07E12-Title"), not where it joins
    words ("Series-Title", "300-nen") or is a tag or a marker itself ("WEB-DL", "S01E01-E03")."""
    tokens: list[str] = []
    for word in words:
        if "-" in word and len(word) > 1:
            low = word.lower()
            if low not in _WORDS and not _is_dashed_marker(low):
                parts = low.split("-")
                tail = parts[1:]
                words_after = "" not in tail and "".join(tail).isalpha()  # letters, none empty
                if not words_after or not _WORDS.keys().isdisjoint(parts):
                    tokens.extend(filter(None, word.split("-")))
                    continue
        tokens.append(word)
    del tokens[MAX_TOKENS:]
    return tokens


def _is_dashed_marker(low: str) -> bool:
    """A dashed word read whole: S01E01-E03, S01-S03, 1x02-03, 2011-04-12, 01-25 (a range)."""
    first = low[0]
    if low[-1] in _CJK_EPISODE:
        return _glued_episode(low) is not None  # 01-24完
    if first == "s" and low[1:2] in _DIGITS:
        return _season_episode(low) is not None
    if first == "e" and (low[1:2] in _DIGITS or (low[1:2] == "p" and low[2:3] in _DIGITS)):
        return _season_episode("s0" + low) is not None  # E01-E03, Ep01-12
    if first in _DIGITS:
        return (
            _cross(low) is not None or _numbers_of(low) is not None or _date_shaped(low) is not None
        )
    return False


def _dashed_date(low: str) -> datetime.date | None:
    """2011-04-12, 12-04-2011, or 03-29-2012 (month first, where the day cannot be a month)."""
    shaped = _date_shaped(low)
    return _date(*shaped) if shaped is not None else None


def _date_shaped(low: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a word written as a date (2011-04-12, 12-04-2011, 03-29-2012), a real
    date or not (2011-02-30 is no date, nor a range of episodes); None: not that shape."""
    parts = low.split("-")
    if len(parts) != 3 or not all(ascii_digits(part) for part in parts):
        return None
    if len(parts[0]) == 4 and len(parts[1]) <= 2 and len(parts[2]) <= 2:
        return int(parts[0]), int(parts[1]), int(parts[2])
    if len(parts[2]) == 4 and len(parts[0]) <= 2 and len(parts[1]) <= 2:
        year, month, day = int(parts[2]), int(parts[1]), int(parts[0])
        return (year, day, month) if month > 12 else (year, month, day)
    return None


class _Numbering:
    """The numbering one name states, and where its first marker stands. (A plain class,
    not a dataclass: compiled, it is a native class, built and read in C.)"""

    def __init__(self) -> None:
        self.marker = -1  # index of the first numbering token (the title ends before it)
        self.seasons: tuple[int, ...] = ()
        self.episodes: tuple[int, ...] = ()
        self.absolute: tuple[int, ...] = ()
        self.air_date: datetime.date | None = None
        self.special = False
        self.absolute_at = -1  # the number after a title's season ("Show S2 - 07")
        self.season_at = -1  # where the season was read
        # Where the title starts after an episode number that opens the name ("01 - Title").
        self.title_at = 0
        # The letters of a word glued to its S01E01 ("zoos01e11") that end the title ("zoo").
        self.glued_title = 0

    def mark(self, index: int) -> None:
        if self.marker < 0 or index < self.marker:
            self.marker = index

    def season(self, seasons: tuple[int, ...], index: int, episodes: tuple[int, ...] = ()) -> None:
        if self.seasons:
            if episodes and self.seasons == seasons:
                # S01E01.S01E02 written apart, or "S03 ... Season 3 Episode 10".
                self.add_episodes(episodes)
            return
        self.seasons = seasons
        self.episodes = episodes
        self.season_at = index
        self.mark(index)

    def add_episodes(self, episodes: tuple[int, ...]) -> None:
        """More episodes of the season, at most MAX_RANGE in all (a name cannot make it grow
        past that, however many ranges it writes)."""
        if len(self.episodes) < MAX_RANGE:
            known = set(self.episodes)
            more = tuple(e for e in episodes if e not in known)
            self.episodes = (self.episodes + more)[:MAX_RANGE]


def _scan_digits(
    low: str, index: int, lows: list[str], found: _Numbering, years: list[int], numbers: list[int]
) -> bool:
    """A token that starts with a digit: a date, a year, NxM, 5of9, a number. False: a title word."""
    if ascii_digits(low):
        size = len(low)
        following = lows[index + 1 : index + 3]
        if size == 4 and 1890 <= int(low) <= _THIS_YEAR + 2:
            # 2011.04.12 (or 2012.13.02, day before month) is a date; 23rd Feb 2024
            # too; otherwise a year.
            if found.air_date is None:
                start, date = index, None
                if len(following) == 2 and _short_numbers(following):
                    date = _date_either_way(int(low), int(following[0]), int(following[1]))
                elif index >= 2 and (lows[index - 1] in _MONTHS or lows[index - 2] in _MONTHS):
                    start, date = index - 2, _month_name_date(int(low), *lows[index - 2 : index])
                if date is not None:
                    found.air_date = date
                    found.mark(start)
                    return True
            years.append(index)
        elif size <= 2 and found.air_date is None and len(following) == 2:
            # 12.04.2011 (day, month, year) or 04.28.2014 (month, day, year).
            middle, year = following
            if len(middle) <= 2 and len(year) == 4 and ascii_digits(middle) and ascii_digits(year):
                date = _date_either_way(int(year), int(middle), int(low))
                if date is not None:
                    found.air_date = date
                    found.mark(index)
                    return True
        elif size in (6, 8) and found.air_date is None:
            date = _compact_date(low)
            if date is not None:
                found.air_date = date
                found.mark(index)
                return True
        if size <= 5:
            numbers.append(index)
        return True
    cross = _cross(low)
    if cross is not None:
        found.season((cross[0],), index, cross[1])
        return True
    if low.endswith("xall") and 1 <= len(low) - 4 <= 2 and ascii_digits(low[:-4]):
        found.season((int(low[:-4]),), index)  # 1xAll: every episode of season 1
        return True
    if "-" in low:
        date = _dashed_date(low)
        if date is not None and found.air_date is None:
            found.air_date = date
            found.mark(index)
            return True
        if _numbers_of(low) is not None:
            numbers.append(index)
            return True
        return False
    head, of, tail = low.partition("of")
    if of and ascii_digits(head) and ascii_digits(tail) and len(head) <= 2 and len(tail) <= 2:
        _of_total(int(head), index, lows, found)
        return True
    head, vee, tail = low.partition("v")
    if vee and ascii_digits(head) and len(head) <= 4 and ascii_digits(tail) and len(tail) == 1:
        numbers.append(index)  # 09v2: a number with a fansub's version
        return True
    return False


def _of_total(number: int, index: int, lows: list[str], found: _Numbering) -> None:
    """`5of9`, `5 of 9` at lows[index]: a mini-series' fifth part; after a season word the
    season ("Season.3of5"), after a season's number its episode ("Season.2.1of4",
    "Season.2of5.3of9")."""
    before = lows[index - 1] if index else ""
    if _WORDS.get(before, ("",))[0] == _SEASON_WORD:
        found.season((number,), index - 1)
    elif found.seasons and not found.episodes and found.season_at >= index - 2:
        found.episodes = (number,)
    elif (
        index >= 2
        and _WORDS.get(lows[index - 2], ("",))[0] == _SEASON_WORD
        and (len(before) <= 2 and ascii_digits(before))
    ):
        found.season((int(before),), index - 2, (number,))
    else:
        found.season((1,), index, (number,))


def _date_either_way(year: int, month: int, day: int) -> datetime.date | None:
    """The date, or with month and day swapped where the month cannot be one (2012.13.02)."""
    if month > 12:
        month, day = day, month
    return _date(year, month, day)


_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ),
        start=1,
    )
    for name in names.split()
}


def _month_name_date(year: int, first: str, second: str) -> datetime.date | None:
    """23rd Feb 2024, Feb 23 2024: a date with the month's name."""
    if first in _MONTHS:
        month, day = _MONTHS[first], second
    elif second in _MONTHS:
        month, day = _MONTHS[second], first
    else:
        return None
    if day[-2:] in ("st", "nd", "rd", "th"):
        day = day[:-2]
    if not 1 <= len(day) <= 2 or not ascii_digits(day):
        return None
    return _date(year, month, int(day))


def _short_numbers(pair: list[str]) -> bool:
    first, second = pair
    return len(first) <= 2 and len(second) <= 2 and ascii_digits(first) and ascii_digits(second)


def _scan_season(low: str, index: int, lows: list[str], found: _Numbering, title_end: int) -> bool:
    """s01e02 and its kin; s01 then e02 in the next token (s03.e05, S01.E.01)."""
    parsed = _season_episode(low)
    if parsed is None:
        return False
    seasons, episodes = parsed
    if not episodes and index > title_end:
        return True  # "[2160p x265 S82 Joy]": a word among the tags, no season
    if not episodes and index + 1 < len(lows):
        following = lows[index + 1]
        if following == "e" and index + 2 < len(lows):
            following = "e" + lows[index + 2]
        if (following[:1] == "e" and following[1:2] != "p") or following[:3] == "ep0":
            more = _season_episode("s0" + following)
            if more is not None and more[1]:
                episodes = more[1]
        elif len(following) == 2 and ascii_digits(following):
            episodes = (int(following),)  # s06.01
        elif following[:1] == "x" and 2 <= len(following) <= 4 and ascii_digits(following[1:]):
            episodes = (int(following[1:]),)  # s03-x01
        else:
            follows = _absolute_follows(lows, index + 1)
            if follows is not None:
                # "Show S2 - 07", "Show S3 - Episode 4", "Show S21 999": the season is
                # part of the title, the numbering after it absolute.
                if follows >= 0:
                    found.absolute_at = follows
                return False
    found.season(seasons, index, episodes)
    return True


def _absolute_follows(lows: list[str], index: int) -> int | None:
    """Where an absolute number follows a title's season (-1: in an episode word); None: none."""
    if index < len(lows) and lows[index] == "-":
        index += 1
    if index >= len(lows):
        return None
    low = lows[index]
    if lows[index - 1] == "-" and (
        _WORDS.get(low, ("",))[0] == _EPISODE_WORD or (low[:2] == "ep" and ascii_digits(low[2:]))
    ):
        return -1  # "S3 - EP14"; "S42 Ep10688" is a season and its episode
    numbered = _numbers_of(low)
    if numbered is None or _is_year_like(low):
        return None
    return index if lows[index - 1] == "-" or len(low) >= 3 else None


def _is_year_like(low: str) -> bool:
    return len(low) == 4 and ascii_digits(low) and 1890 <= int(low) <= _THIS_YEAR + 2


def _scan_words(
    lows: list[str],
    found: _Numbering,
    marks: dict[str, list[int]],
    numbers: list[int],
    years: list[int],
    title_end: int,
    fansub: bool,
) -> None:
    """Markers in words and numbers alone, read once the pass has found the rest.

    Where a number can be read two ways it is given both: "Show E05" and
    "Show - 130 - Title" carry the absolute number and S01E05 / S01E30, so a
    search by season and episode and one by absolute number both find them.
    """
    size = len(lows)
    # "Season 01", "Season 01 Episode 05", "Saison 3", "Seasons 1-3".
    for index in marks["season"]:
        if lows[index] == "series" and lows[index - 1 : index] != ["-"]:
            continue  # "Series Title - Series 1": only after a dash is it a season
        numbered = _numbers_of(lows[index + 1]) if index + 1 < size else None
        if numbered is None and index + 1 < size and lows[index + 1] in _ROMAN:
            numbered = (_ROMAN[lows[index + 1]],)  # "Saison VII"
        elif numbered is None and index + 1 < size and "&" in lows[index + 1]:
            parts = lows[index + 1].split("&")  # "Season.1&3": seasons 1 and 3
            if all(len(part) <= 2 and ascii_digits(part) for part in parts):
                numbered = tuple(int(part) for part in parts)
        if numbered is not None and all(n < 100 for n in numbered):
            episodes: tuple[int, ...] = ()
            after = index + 2
            while after < size and lows[after] == "-":
                after += 1
            if after + 1 < size and _WORDS.get(lows[after], ("",))[0] == _EPISODE_WORD:
                episodes = _numbers_of(lows[after + 1]) or ()
            found.season(numbered, index, episodes)
            break
    # "Episode 05", "Ep08", "E05", "E01-E03", "Cap.201", "60.Bolum".
    following = found.season_at + 1  # where more episodes of S01E01 may stand (S01E01.E02)
    for index in marks["episode"]:
        at = -index - 1 if index < 0 else index
        low = lows[at]
        if index < 0:
            numbered = _glued_episode(low)
        elif low in _EPISODE_AFTER:
            numbered = _numbers_of(lows[at - 1]) if at > 0 else None
            at -= 1
        else:
            numbered = _numbers_of(lows[at + 1]) if at + 1 < size else None
        if not numbered:
            continue
        if low == "cap" and numbered[0] >= 100:
            # Cap.201 is S02E01, whatever season the name said before; Cap.102_104 is
            # S01E02-E04 (the last number of the same season).
            closing = lows[at + 2] if at + 2 < size else ""
            if len(numbered) == 1 and len(closing) == len(lows[at + 1]) and ascii_digits(closing):
                if int(closing) // 100 == numbered[0] // 100 and int(closing) > numbered[0]:
                    numbered = _span(numbered[0], int(closing))
            found.seasons = ()
            found.season((numbered[0] // 100,), at, tuple(n % 100 for n in numbered))
            return
        if found.seasons:
            if not found.episodes and at <= found.season_at + 5:
                found.episodes = numbered
                following = at + 1
            elif index < 0 and found.episodes and at == following + 1 and lows[following] == "-":
                found.episodes = _span(found.episodes[0], numbered[-1])  # Ep10688 - Ep10692
                following = at + 1
            elif found.episodes and at == following:
                found.add_episodes(numbered)
                following = at + 1
            continue
        if not found.absolute:
            found.absolute = numbered
            found.mark(at)
            if not fansub and low not in _EPISODE_AFTER and all(n < 1000 for n in numbered):
                found.season((1,), at, numbered)  # E05 alone: also a mini-series' fifth
    if found.seasons or found.absolute:
        if fansub and not found.absolute:
            _fansub_absolute(lows, found, numbers, years, before_marker=True)
        _read_after_episode(lows, found)
        return
    # "Part01", "Part 2", "Part Two": a mini-series' part, unless a year follows ("Movie Part 2 2011").
    if marks["part"]:
        index = marks["part"][0]
        at = -index - 1 if index < 0 else index
        low = lows[at]
        if index < 0:
            numbered = _numbers_of(low[4:] if low.startswith("part") else low[2:])
        elif at + 1 < size:
            word = _NUMBER_WORDS.get(lows[at + 1])
            numbered = (word,) if word else _numbers_of(lows[at + 1])
        else:
            numbered = None
        if (
            numbered is not None
            and all(n < 100 for n in numbered)
            and not any(y > at for y in years)
        ):
            found.season((1,), at, numbered)
            return
    if found.air_date is not None:
        return
    if found.absolute_at >= 0:
        found.absolute = _numbers_of(lows[found.absolute_at]) or ()
        found.mark(found.absolute_at)
        return
    # "Show - 13", "Show - 013", "Show - 01-12", "Show - 130 - Title": numbers after a dash.
    for position, index in enumerate(numbers):
        if 0 < index < title_end and lows[index - 1] == "-" and not _is_year_like(lows[index][:4]):
            low = lows[index]
            numbered = _numbers_of(low)
            if numbered is None:
                continue
            later = numbers[position + 1] if position + 1 < len(numbers) else -1
            # "Show 01 - 119" (a padded first number): a batch; "Show 2 - 05" is season 2's fifth.
            before = (
                _numbers_of(lows[index - 2]) if index >= 2 and lows[index - 2][0] == "0" else None
            )
            if before and len(numbered) == 1 and before[0] < numbered[0] < before[0] + MAX_RANGE:
                numbered = _span(before[0], numbered[0])  # "Show 01 - 119": a batch
                index -= 2
            elif later == index + 2 and lows[index + 1] == "-" and len(numbered) == 1:
                last = _numbers_of(lows[later])
                if last and numbered[0] < last[0] < numbered[0] + MAX_RANGE:
                    numbered = _span(numbered[0], last[0])  # "01 - 10" (from 01~10)
            elif later > index and index + 1 < size and _is_title_word(lows[index + 1]):
                continue  # "Show - 100 Years Quest - 01": the number is the title's
            found.absolute = numbered
            found.mark(index - 1)
            if len(low) == 3 and low[0] != "0" and not fansub and numbered[0] % 100:
                found.season((numbered[0] // 100,), index, (numbered[0] % 100,))
            return
    # "003. Show Name - Title", "[Group] 12 - Show [720p]": a number opening the name
    # (padded, or after a fansub's [Group]), then the title; never with a year
    # ("007.Skyfall.2012" is a film).
    if numbers and numbers[0] == 0 and size > 2 and (fansub or lows[0][0] == "0") and not years:
        numbered = _numbers_of(lows[0])
        if numbered is not None and 2 <= len(lows[0].partition("-")[0]) <= 3:
            at = 2 if lows[1] == "-" else 1
            # Without a fansub's [Group], only a file's "NN - Show" or "NNN. Show - Title"
            # ("007 Skyfall 1080p" is a film).
            dashed = at == 2 or "-" in lows[at:title_end]
            if _is_title_word(lows[at]) and (fansub or dashed):
                found.absolute = numbered
                found.title_at = at
                if not fansub:
                    found.season((1,), 0, numbered)
                    found.marker = -1  # the title follows the number: no marker ends it
                return
    if fansub:
        _fansub_absolute(lows, found, numbers, years, before_marker=False)
        if found.absolute:
            return
    # "1 of 6", "14.of.21": a mini-series' part.
    for index in numbers if "of" in lows else ():
        if 0 < index < size - 2 and lows[index + 1] == "of" and len(lows[index]) <= 2:
            total = _numbers_of(lows[index + 2])
            if total is not None and ascii_digits(lows[index]) and int(lows[index]) <= total[0]:
                _of_total(int(lows[index]), index, lows, found)
                return
    # "Series S 01": a season pack, the S apart.
    for index in numbers:
        if (
            index > 1
            and lows[index - 1] == "s"
            and len(lows[index]) == 2
            and ascii_digits(lows[index])
        ):
            found.season((int(lows[index]),), index - 1)
            return
    # "Title.103.720p" is S01E03, "Title.1013" S10E13, "Title.103.104" S01E03E04,
    # "Title.10708" S01E07E08: three to five digits right after the title, never a
    # year or a resolution; "Title 04 VOSTFR 1080p", two digits there, is S01E04.
    for position, index in enumerate(numbers):
        low = lows[index]
        if index == 0 or index > title_end or index in years:
            continue
        if len(low) == 5 and ascii_digits(low):
            first, second = int(low[1:3]), int(low[3:])
            if second == first + 1 and first:
                found.season((int(low[0]),), index, (first, second))
                return
            continue
        if (
            len(low) == 2
            and ascii_digits(low)
            and all(year < index for year in years)
            and _ends_title(lows, index, title_end)
        ):
            found.season((1,), index, (int(low),))
            return
        padded = low.partition("v")[0] if low[0] == "0" and not years else ""
        if len(padded) == 2 and ascii_digits(padded):
            # "Neverwhere.05.Down.Street", "Show.07v4.PDTV": a padded number after the
            # title is an episode (a film's sequel is "2", not "02").
            found.season((1,), index, (int(padded),))
            return
        if len(low) not in (3, 4) or not ascii_digits(low):
            numbered = _numbers_of(low)
            if numbered is not None and len(numbered) > 1 and index <= title_end:
                found.absolute = numbered  # "Show 1-13 [720p]": a batch
                found.mark(index)
                return
            continue
        value = int(low)
        if value < 100 or value in _RESOLUTION_NUMBERS or value % 100 == 0 or 1900 <= value <= 2099:
            continue
        run = [value % 100]
        for later in numbers[position + 1 : position + 4]:
            other = lows[later]
            if (
                later == index + len(run)
                and len(other) == len(low)
                and ascii_digits(other)
                and int(other) // 100 == value // 100
            ):
                run.append(int(other) % 100)
        found.season((value // 100,), index, tuple(run))
        return


def _bare_resolution(lows: list[str], numbers: list[int]) -> int | None:
    """A resolution written as a bare number beside what says quality: "720.HDTV",
    "BRrip 720 AAC", "1280*720", "[1080.Hi10p]"; taken out of `numbers` (no episode)."""
    for position, index in enumerate(numbers):
        low = lows[index]
        if low not in _BARE_RESOLUTIONS or index == 0:
            continue
        before, after = lows[index - 1], lows[index + 1] if index + 1 < len(lows) else ""
        if (
            before in _WIDTHS
            or _WORDS.get(before, ("",))[0] in _STRONG
            or _WORDS.get(after, ("",))[0] in (_SRC, _CODEC)
            or after.startswith("hi10")
        ):
            del numbers[position]
            return int(low)
    return None


def _ends_title(lows: list[str], index: int, title_end: int) -> bool:
    """Whether only tags (a language, a flag) stand between lows[index] and the quality."""
    return title_end < len(lows) and all(_is_weak(low, True) for low in lows[index + 1 : title_end])


def _read_after_episode(lows: list[str], found: _Numbering) -> None:
    """What may follow S01E01: "of 8" (S1E1-8 of 8: the whole season), "_02" (8x01_02)."""
    after = found.season_at + 1
    if not found.episodes or after <= 0 or after >= len(lows):
        return
    low = lows[after]
    if (
        low == "of"
        and after + 1 < len(lows)
        and _numbers_of(lows[after + 1]) == found.episodes[-1:]
    ):
        if found.episodes[0] == 1 and len(found.episodes) > 1:
            found.episodes = ()  # every episode of the season: a pack
    elif len(low) == 2 and ascii_digits(low) and int(low) == found.episodes[-1] + 1:
        found.add_episodes((int(low),))


def _is_title_word(low: str) -> bool:
    return low.isalpha() and low not in _WORDS


def _fansub_absolute(
    lows: list[str], found: _Numbering, numbers: list[int], years: list[int], *, before_marker: bool
) -> None:
    """A fansub's absolute number: "[Group] Show 13 [1080p]", "[Group] Show 214 10x14"."""
    for index in numbers:
        low = lows[index]
        if index == 0 or index in years or len(low) < 2 or _is_year_like(low[:4]):
            continue
        if len(lows[index - 1]) <= 2 and ascii_digits(lows[index - 1]):
            continue  # "Evangelion 1.11": the number after a point is no episode
        if before_marker and found.marker >= 0 and index > found.marker + 1:
            if index != found.marker + 2 or lows[found.marker + 1] != "-":
                return  # "S01E01-02 - 001-002": the absolute numbers right after
        if (
            before_marker
            and index == found.marker - 1
            and lows[index + 1][0] == "s"
            and _is_title_word(lows[index - 1])
        ):
            # "Series at Age 29 S01E03": a number the title ends in, no dash before the
            # S01E03 ("Show 214 10x14" is episode 214 of season 10).
            continue
        numbered = _numbers_of(low)
        if numbered is not None and not (numbered[0] in _RESOLUTION_NUMBERS and len(low) > 2):
            found.absolute = numbered
            found.mark(index - 1 if lows[index - 1] == "-" else index)
            return


def _numbers_of(low: str) -> tuple[int, ...] | None:
    """A number of 1-4 digits, `09v2`, or a range `01-25`, `01-02-03` of at most MAX_RANGE
    numbers; None: none of those (`12-03`, `2011-02-30`, `01-9999` and the years
    `1982-1992` are no range of episodes)."""
    if ascii_digits(low):
        return (int(low),) if len(low) <= 4 else None
    head, dash, tail = low.partition("-")
    if dash:
        last = tail.rpartition("-")[2]
        if ascii_digits(head) and ascii_digits(last) and len(head) <= 4 and len(last) <= 4:
            first, final = int(head), int(last)
            if (
                (tail == last or ascii_digits(tail.replace("-", "")))
                and first <= final < first + MAX_RANGE
                and not (_is_year_like(head) and _is_year_like(last))
            ):
                return _span(first, final)
        return None
    head, vee, tail = low.partition("v")
    if vee and ascii_digits(head) and len(head) <= 4 and ascii_digits(tail):
        return (int(head),)
    return None


def parse_release_name(name: str, *, _again: bool = True) -> ParsedName:
    """The fields of a release name (see the module docstring). `_again` (internal):
    the title may be read from a part of the name; that part's own parse is not."""
    text, leading_group, extension = _strip_tags(name[:MAX_NAME_LENGTH])
    words = _split(text)
    del words[MAX_TOKENS:]
    group = None
    if words and "-" in words[-1]:
        words[-1], group = _group_of(words[-1])
        if not words[-1]:
            words.pop()
    # A fansub's name opens with its [Group] and has no -GROUP suffix
    # ("[Dolby Vision] Show.S07.REMUX-NoTag" is a scene name with a tag).
    fansub = leading_group is not None and group is None
    if group is None:
        group = leading_group
    tokens = _tokens(words) if "-" in text and "-" in " ".join(words) else words
    # One lower() and one split (lower() makes no spaces, so the tokens stay aligned).
    lows = " ".join(tokens).lower().split()

    resolution = source = codec = None
    tagged: list[tuple[int, str, str]] = []  # (index, field, value) of weak tags
    title_end = len(lows)  # the first quality tag (a title ends there at the latest)
    years: list[int] = []
    numbers: list[int] = []
    marks: dict[str, list[int]] = {"season": [], "episode": [], "part": []}
    found = _Numbering()
    version = None
    encoded = False  # an encoder's codec (x264, XviD), not a disc's (AVC, VC-1)
    alias = None  # a resolution's name: 4K, UHD, FHD
    for index, low in enumerate(lows):
        known = _WORDS.get(low)
        if known is not None:
            field, value = known
            if field in _STRONG:
                # A title may open with one ("Web Therapy", "HD Show").
                if index > 0 and title_end > index:
                    title_end = index
                if field == _RES:
                    if low in _RESOLUTION_ALIASES:
                        # "4K BluRay Remux 1080p": a number, where there is one, says more.
                        alias = alias or value
                    else:
                        resolution = resolution or value
                elif field == _SRC:
                    if source is None or value in _BETTER_SOURCE.get(source, ()):
                        source = value
                else:
                    codec = codec or value
                    encoded = encoded or low not in _DISC_CODECS
            elif field in _MARKS:
                marks[field].append(index)
            elif field == _SPECIAL:
                found.special = True
            else:
                tagged.append((index, field, value))
            continue
        if low.isalpha() or len(low) > MAX_TOKEN_LENGTH or low == "-":
            continue
        first = low[0]
        if first in _DIGITS:
            if not _scan_digits(low, index, lows, found, years, numbers):
                glued = _resolution_suffix(low)
                rated = _frame_rate_resolution(low) if glued is None else None
                if glued is not None or rated is not None:
                    resolution = resolution or (glued[0] if glued else rated)
                    title_end = min(title_end, index) if index else title_end
                elif _glued_episode(low):
                    marks["episode"].append(-index - 1)
            continue
        if (
            first == "s"
            and low[1:2] in _DIGITS
            and _scan_season(low, index, lows, found, title_end)
        ):
            continue
        if (first == "e" and low[1:2] in _DIGITS) or (low[:2] == "ep" and low[2:3] in _DIGITS):
            marks["episode"].append(-index - 1)  # the number is in the token
            continue
        if first in "xh" and low[1:] in _CODEC_NUMBERS:
            codec = codec or _CODEC_NUMBERS[low[1:]]
            encoded = True
            continue
        if first == "v" and len(low) <= 3 and ascii_digits(low[1:]):
            version = int(low[1:])
            continue
        glued = _resolution_suffix(low)
        if glued is not None:
            resolution = resolution or glued[0]
            source = source or glued[1]
            if index and title_end > index:
                title_end = index
            continue
        _scan_glued_word(low, index, found, marks)
    # "H.264" split into its parts: a codec, not an episode 264.
    if "264" in lows or "265" in lows:
        for index in range(1, len(lows)):
            if lows[index] in _CODEC_NUMBERS and lows[index - 1] in ("h", "x"):
                codec = codec or _CODEC_NUMBERS[lows[index]]
                encoded = True
                numbers[:] = [i for i in numbers if i != index]
    if resolution is None and numbers:
        resolution = _bare_resolution(lows, numbers)
    resolution = resolution or alias
    if numbers or marks["season"] or marks["episode"] or marks["part"]:
        _scan_words(lows, found, marks, numbers, years, title_end, fansub)

    # The title: tokens before the first marker; a movie's last year closes it.
    end = title_end if found.marker < 0 else min(found.marker, title_end)
    if found.title_at:
        # After the number that opens the name, up to a dash ("01 - Show - Title").
        dash = lows.index("-", found.title_at) if "-" in lows[found.title_at : end] else end
        end = min(end, dash)
    year_index = _year_index(lows, years, end, found) if years else -1
    start = found.title_at  # where the title starts: after a number or a year opening it
    if years == [0] and year_index < 0 and end > 1 and text.lstrip()[:1] == "(":
        year_index, start = 0, 1  # "(1995) Movie Name"
    year = int(lows[year_index]) if year_index >= 0 else None
    numbered = bool(found.seasons or found.absolute or found.air_date)
    if year_index >= start and not numbered and year_index < end:
        end = year_index
    video = resolution is not None or source is not None or codec is not None
    # "Test.Real.S02E01", "Shes.Gotta.Have.It.S01E08": before an S01E01 a flag or a
    # language is the title's word (names state them after it).
    spelled = end == found.season_at and bool(found.episodes) and lows[end][:1] == "s"
    # "The.Good.German.2006": a language's name right before a movie's year is the title's.
    if not (end == year_index and end - start > 1 and _language_of_title(lows, start, end)):
        end = _trimmed_title_end(lows, end, spelled, video)
    if end == 1 and lows and lows[0] == "-":
        end = 0
    other_script = not text.isascii() and _has_other_script(lows[start:end])
    if other_script and end - start > 1:
        start = _latin_title_start(lows, start, end)
    title_words = lows[start:end]
    title = " ".join(tokens[start:end])
    if found.glued_title and end == found.season_at and found.marker == end:
        # "grp-zoos01e11", "TheSeriesS06E11": the word before the S01E01 is the title's.
        title_words = [*title_words, lows[end][: found.glued_title]]
        title = " ".join((*tokens[start:end], tokens[end][: found.glued_title]))
    key = None
    if _again and (start == end or ("/" in text and other_script)):
        # "221208 Show ep11": the title after a date that opens the name; "Босх:
        # Спадок (S2E1) / Series: Legacy (S2E1)", "刀剑神域: Alicization / Anime
        # Series": the Latin title after the " / ".
        rest = _title_part(text, tokens, found, start)
        if rest:
            other = parse_release_name(rest, _again=False)
            if other.title_key and (
                # After a date, a title its own episode follows ("2018-11-14.1080.all" has none).
                (other.episodes or other.absolute_episodes)
                if start == end
                else not _has_other_script(other.title_key.split())
            ):
                title, key = other.title, other.title_key
    if found.air_date is not None and year is None:
        year = found.air_date.year
    if year is None and found.seasons and 1900 <= found.seasons[0] <= _THIS_YEAR + 1:
        year = found.seasons[0]  # S2014E18, 1940x01: a season named by its year

    languages: list[str] = []
    edition = None
    tags: list[str] = []
    proper = repack = False
    for index, field, value in tagged:
        if index < end and value not in _TITLE_TAGS:
            continue  # a title's own word ("The Italian Job"); "BD25 Movie" is a disc
        if field == _LANG:
            if value not in languages:
                languages.append(value)
        elif field == _EDITION:
            edition = edition or value
        elif field == _FLAG:
            proper = proper or value == "proper"
            repack = repack or value == "repack"
        elif field == _TAG and value not in tags:
            tags.append(value)
    stated = resolution
    resolution, source = _quality(
        name, lows[end:], resolution, source, codec, encoded, extension, tags
    )
    if group is not None and _WORDS.get(group.lower()) == (_TAG, "game") and "game" not in tags:
        tags.append("game")  # "Game.Title-CODEX": a game's cracking group
    if resolution is None and numbered and codec == "h264":
        resolution = 480  # Sonarr: x264 alone is SDTV
    for index in numbers:
        low = lows[index]
        if "v" in low and ascii_digits(low[-1]):
            version = version or int(low[-1])
    if version is not None and version >= 2:
        proper = True

    kind = _kind(
        found,
        # A [Tag] that ends a name names its group, but is no sign of anime on its own: scene
        # and p2p names end in one as often ("Show (2021) S01 (1080p BluRay x265) [QxR]").
        fansub and name.lstrip()[:1] in _OPENING_BRACKETS,
        year,
        stated,
        source,
        codec,
        tags,
        extension in _VIDEO_EXTENSIONS,
        edition,
    )
    return _build(
        {
            "kind": kind,
            "title": title,
            "title_key": _key(title_words) if key is None else key,
            "year": year,
            "seasons": found.seasons,
            "episodes": found.episodes,
            "absolute_episodes": found.absolute,
            "air_date": found.air_date,
            "full_season": bool(found.seasons) and not found.episodes,
            "special": found.special or 0 in found.seasons,
            "resolution": resolution,
            "source": source,
            "codec": codec,
            "edition": edition,
            "languages": tuple(languages),
            "group": group,
            "proper": proper,
            "repack": repack,
            "tags": tuple(tags),
            "version": version,
        }
    )


def _trimmed_title_end(lows: list[str], end: int, spelled: bool, video: bool) -> int:
    """Where a title ends once the tags before its end are trimmed off ("Movie German DL",
    "World Movie Z EXTENDED 2013")."""
    while end > 1 and (
        lows[end - 1] == "-"
        or (not spelled and _is_weak(lows[end - 1], video))
        or (lows[end - 1] == "cut" and end > 2 and _is_weak(lows[end - 2], video))
    ):
        end -= 1  # "Movie German DL", "World Movie Z EXTENDED 2013": tags before the year
    return end


def _language_of_title(lows: list[str], start: int, end: int) -> bool:
    """Whether the word before a movie's year, a language's name, is the title's own
    ("The.Good.German.2006", "Zorba.the.Greek.1964"): names state the release's language
    after the year, and before it only in a title in that language ("Der.Film.deines
    .Lebens.German.2011", which opens with that language's article)."""
    known = _WORDS.get(lows[end - 1])
    if known is None or known[0] != _LANG:
        return False
    return lows[start] not in _FOREIGN_ARTICLES.get(known[1], ())


# Articles a title in that language opens with.
_FOREIGN_ARTICLES: Final = {
    "german": frozenset(("der", "die", "das", "ein", "eine")),
    "french": frozenset(("le", "la", "les", "un", "une")),
    "spanish": frozenset(("el", "la", "los", "las", "un", "una")),
    "italian": frozenset(("il", "lo", "la", "gli", "le", "un", "una")),
    "dutch": frozenset(("de", "het", "een")),
}


def _is_latin(char: str) -> bool:
    """A letter of the Latin alphabets (ASCII, Latin-1, Extended-A/B and Additional)."""
    code = ord(char)
    return code < 0x250 or 0x1E00 <= code <= 0x1EFF


def _has_latin(words: list[str]) -> bool:
    return any(c.isalpha() and _is_latin(c) for word in words for c in word)


def _has_other_script(words: list[str]) -> bool:
    """Whether a letter of another script than Latin is in the words."""
    return any(
        not word.isascii() and any(c.isalpha() and not _is_latin(c) for c in word) for word in words
    )


def _latin_title_start(lows: list[str], start: int, end: int) -> int:
    """Where the title's Latin part starts when it follows words in another script
    ("我的人间烟火 Fireworks Series", "Енола Голмс Enola Holmes"); `start` otherwise,
    and when the other script ends the title ("나는 SOLO 나는 솔로" is one title)."""
    last = -1
    for index in range(start, end):
        if _has_other_script([lows[index]]):
            last = index
    if last < 0:
        return start
    for index in range(last + 1, end):
        word = lows[index]
        if any(c.isalpha() for c in word):
            return index if word.isascii() or _has_latin([word]) else start
    return start


def _title_part(text: str, tokens: list[str], found: _Numbering, start: int) -> str:
    """The part of a name its title is read from again: after a date that opens the
    name ("221208 Show ep11"), or after the first "/" with a space beside it (a
    second title); "" for none."""
    if start == 0 and found.air_date is not None and found.marker == 0:
        after = 1
        while after < min(len(tokens), 3) and tokens[after][:1] in _DIGITS:
            after += 1  # "2021.08.10 Show": the date's other tokens
        return " ".join(tokens[after:]) if after < len(tokens) else ""
    at = text.find("/")
    while at >= 0:
        if text[at - 1 : at] == " " or text[at + 1 : at + 2] == " ":
            return text[at + 1 :]  # "Title / Title", "Title/ Title" ("Ukr/Eng" is no title)
        at = text.find("/", at + 1)
    return ""


def _quality(
    name: str,
    lows: list[str],
    resolution: int | None,
    source: str | None,
    codec: str | None,
    encoded: bool,
    extension: str,
    tags: list[str],
) -> tuple[int | None, str | None]:
    """Resolution and source as Sonarr and Radarr settle them from the tokens after the
    title; "disc" added to tags for a whole BluRay disc (Radarr's BR-DISK: a BluRay with a
    disc's codec and no encode)."""
    if source == "cam":
        return 480, source  # a camera copy is SD whatever size it is scaled to
    if source == "dvd":
        at = lows.index("hd") if "hd" in lows else -1
        if 0 <= at < len(lows) - 1 and lows[at + 1] == "dvd":
            source = "bluray"  # HD DVD: a disc of BluRay's kind
    elif source is None:
        if "ray" in lows and lows.index("ray") and lows[lows.index("ray") - 1] == "blu":
            source = "bluray"  # Blu.ray
        elif "tv" in lows:
            at = lows.index("tv")
            if at and lows[at - 1] in ("hd", "sd"):
                source = "hdtv" if lows[at - 1] == "hd" else "sdtv"  # "HD TV", "SD TV"
                resolution = resolution or (720 if source == "hdtv" else 480)
    if "3d" in tags and source == "bluray":
        at = lows.index("3d")
        if at + 1 < len(lows) and lows[at + 1] == "bd":
            tags.append("disc")  # 3D BD: Radarr's name for a 3D disc
    if source == "bluray" and "disc" not in tags and not encoded and extension != "mkv":
        if (codec is not None or "iso" in lows or "bdmv" in lows or "complete" in lows) and (
            resolution != 720 and not (resolution == 1080 and codec == "h265")
        ):
            if "german" in lows and ("dl" in lows or "ml" in lows):
                source = "remux"  # a German scene BluRay with its disc's codec: a remux
            else:
                tags.append("disc")
    if resolution is None:
        if source == "sdtv" and "hr" in lows:
            resolution = 720  # HR.WS.PDTV: a high-resolution capture
        elif source in ("hdtv", "webdl") and (
            "[HDTV]" in name or "[WEBDL]" in name or "[web]" in name.lower()
        ):
            resolution = 720  # Sonarr's naming of a 720p file, a fansub's web release
        elif source == "bluray" and codec == "xvid":
            resolution = 480
        elif source is not None:
            resolution = _SOURCE_RESOLUTION.get(source)
        elif extension in ("mkv", "m2ts"):
            resolution = 720  # Sonarr: an .mkv is HDTV 720p, an .m2ts BluRay 720p
            source = "bluray" if extension == "m2ts" else None
    if "disc" in tags and resolution is None:
        resolution = 1080
    return resolution, source


def _glued_episode(low: str) -> tuple[int, ...] | None:
    """E05, Ep05, E01-E03, #17, 第05话, 857集, 13完, 12END: an episode word glued to its number."""
    if low[0] in "e#":
        glued = _season_episode("s0" + low) if low[0] == "e" else None
        return glued[1] if glued is not None else _numbers_of(low[1:])
    if low[0] == "第":
        low = low[1:]
    if low[-1:] in _CJK_EPISODE:
        return _numbers_of(low[:-1])
    if low.endswith("end"):
        return _numbers_of(low[:-3])
    return None


def _scan_glued_word(low: str, index: int, found: _Numbering, marks: dict[str, list[int]]) -> None:
    """Saison3, Season1, Part01, 第05话: a marker word glued to its number."""
    for prefix in _GLUED_SEASON:
        if low.startswith(prefix):
            number = _numbers_of(low[len(prefix) :])
            if number is not None:
                found.season(number, index)
                return
    if low.startswith(("part", "pt")) and _numbers_of(low[4:] if low[1] == "a" else low[2:]):
        marks["part"].append(-index - 1)
    elif (low[0] in "#第" or low[-1] in _CJK_EPISODE or low.endswith("end")) and _glued_episode(
        low
    ):
        marks["episode"].append(-index - 1)
    else:
        # "TheSeriesS06E11", "zoos01e11": a title word glued to its S01E01.
        at = low.rfind("s", 1)
        while at > 0:
            if low[at + 1 : at + 2] in _DIGITS:
                glued = _season_episode(low[at:])
                if glued is not None and glued[1]:
                    if not found.seasons:
                        found.glued_title = at
                    found.season(glued[0], index, glued[1])
                    return
            at = low.rfind("s", 1, at)


def _year_index(lows: list[str], years: list[int], end: int, found: _Numbering) -> int:
    """Which year-like token is the year: the last one in the title (never its first
    word unless a year follows: "1917.2019"), else the first after it."""
    chosen = -1
    for index in years:
        if index < end or (index == end and found.marker != index):
            if index > 0 or (len(years) > 1 and years[1] == 1):
                chosen = index
        elif chosen < 0 and index > end and not found.air_date:
            return index
    return chosen


def _is_weak(low: str, video: bool) -> bool:
    """A tag trimmed off a title's end: languages, editions, flags; a category's tag
    ("Album FLAC", "Book EPUB") where nothing says video, where it could be a title's word."""
    known = _WORDS.get(low)
    if known is None:
        return False
    return known[0] in _TRIMMED or (known[0] == _TAG and (not video or known[1] in _TRIMMED_TAGS))


def _build(fields: dict[str, object]) -> ParsedName:
    # A frozen dataclass's __init__ sets each field through object.__setattr__ one by one,
    # a tenth of an interpreted parse and a third of a compiled one; the instance takes
    # its dict at once. (ParsedName is defined in a module that is never compiled:
    # compiled, its instances would have no dict.)
    parsed = object.__new__(ParsedName)
    object.__setattr__(parsed, "__dict__", fields)
    return parsed


def _kind(
    found: _Numbering,
    fansub: bool,
    year: int | None,
    resolution: int | None,
    source: str | None,
    codec: str | None,
    tags: list[str],
    video_file: bool,
    edition: str | None,
) -> str:
    """tv, anime, movie, or what the tags say where nothing says video (`resolution`:
    the one the name states, not the one its source implies)."""
    if found.absolute:
        return "anime"
    video = resolution is not None or codec is not None or video_file
    if found.air_date is not None and not found.seasons and not (video or source):
        dated = _tag_kind(tags)  # "The Economist - 07 January 2023 (True PDF)": an issue
        if dated is not None:
            return dated
    if found.seasons or found.air_date:
        return "anime" if fansub or "anime" in tags else "tv"
    if "batch" in tags or ("complete" in tags and year is None and "disc" not in tags):
        return "anime" if fansub else "tv"  # a season's or a series' episodes together
    if fansub and found.special:
        return "anime"  # "[Group] Show - NCOP", "[Group] Show OVA"
    if "disc" in tags or "3d" in tags:
        return "movie"
    # A source alone ("WEB", "CD") is no video where an audio tag says what it is:
    # "Artist-Album-24BIT-WEB-FLAC-2011-GRP" is an album.
    audio = "lossless" in tags or "mp3" in tags or "audiobook" in tags
    if video or (source and not audio):
        if "music_video" in tags:
            return "audio"
        if "documentary" in tags and year is None:
            return "tv"  # a documentary series' release without its numbering
        return "movie"
    tagged = _tag_kind(tags)
    if tagged is not None:
        return tagged
    if fansub and year is None:
        return "anime"  # "[Group] Show": a fansub's series
    # An edition ("Extended Cut") is a film's.
    return "movie" if year is not None or edition is not None else "other"


def _tag_kind(tags: list[str]) -> str | None:
    """The kind the first of _KIND_OF_TAG's tags in `tags` gives; None: none of them."""
    if not tags:
        return None  # most names: no generator to start
    return next((kind for tag, kind in _KIND_OF_TAG if tag in tags), None)


_KIND_OF_TAG: Final = (
    ("audiobook", "audio"),
    ("music_video", "audio"),
    ("lossless", "audio"),
    ("mp3", "audio"),
    ("ebook", "book"),
    ("comic", "book"),
    ("game", "software"),
    ("software", "software"),
)

# Whether this module runs compiled (a compiled function is no Python function): setup.py
# builds it with mypyc (`make install`, `pip install .`); where no C compiler was found,
# or the source changed since, the .py is the module (usenet/__init__.py). Both read every
# name alike (tests/usenet/test_release_names_compiled.py).
COMPILED = not isinstance(parse_release_name, types.FunctionType)


__all__ = [
    "COMPILED",
    "FIELDS_VERSION",
    "KINDS",
    "MAX_NAME_LENGTH",
    "MAX_NUMBER",
    "MAX_TOKENS",
    "ParsedName",
    "parse_release_name",
    "title_key",
]
