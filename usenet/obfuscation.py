"""Whether a release or file name is obfuscated: random letters and digits, no word.

Most binaries are posted under names such as ``a8f7d6e5c4b3``,
``b1c2d3.part01.rar`` or a UUID; their real names are only inside the files
(issue 26). A name is obfuscated when, once its archive and volume suffixes
and one file extension are cut off, none of its tokens (split at ``. _ -``,
spaces and brackets) is a word. A word is a token of at least three letters
that is not hash-like. A token is hash-like when it is long and mixes
letters and digits back and forth (``b1c2d3``: at least three changes
between a letter and a digit), when it is 16 or more hexadecimal characters,
or when it is 24 or more letters and digits with no separator at all (no
title runs that long as one token). A token of LETTERS_TOKEN or more letters
and nothing else is gibberish, not a word, when it has RARE_BIGRAMS or more
letter pairs that English text hardly has (`xkqzvbnmwp`, `QwErTyUiOpAsDfG`),
or fewer than one vowel (a e i o u y) in VOWEL_SHARE letters: random letters
read so at least 99 % of the time from eight letters up, and no name of the
parser corpora (tests/usenet/data) changes (tests/usenet/test_obfuscation_corpus.py).

A name with no word is still a real one when its only letters are a short
title beside what only a real name carries: a year, a resolution, a source,
a codec or an episode number (``Up.2009.1080p``, read by
usenet.release_names).

No regular expression: one pass over the characters. Names are cut at
MAX_NAME characters first, so the cost is bounded whatever is posted.
"""

from __future__ import annotations

from .release_names import parse_release_name

__all__ = ["is_obfuscated", "is_word"]

MAX_NAME = 1024
MIN_WORD_LETTERS = 3
MIXED_TOKEN = 6  # at least this long to be hash-like by its letter/digit changes
MIXED_CHANGES = 3
HEX_TOKEN = 16
LONG_TOKEN = 24
LETTERS_TOKEN = 8
RARE_BIGRAMS = 2
VOWEL_SHARE = 4

_SEPARATORS = frozenset("._- ()[]{}+,")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
# Suffixes cut from the end before the tokens are read: archive parts and
# volumes, then one extension of the files releases carry.
_VOLUME_WORDS = frozenset(("rar", "par2", "par", "7z", "zip", "nfo", "sfv", "srr", "nzb"))
_EXTENSIONS = frozenset(
    "mkv mp4 avi m4v wmv mov mpg mpeg ts m2ts webm iso img bin mp3 flac m4a m4b aac ogg "
    "epub pdf mobi azw3 cbr cbz exe jpg png txt srt sub idx".split()
)
_LONGEST_SUFFIX = len("vol99999+99999")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_VOWELS = frozenset("aeiouy")
# The letter pairs seen ten times or more in the words of three letters and up
# of CPython's pydoc topics (English prose): a fixed table, not learnt from names.
_COMMON_BIGRAMS = frozenset(
    "ab ac ad ae af ag ai ak al am an ap ar as at au av aw ax ay az ba bc bd be bi "
    "bj bl bo bp br bs bt bu by ca cc ce ch ci ck cl cm co cp cr cs ct cu cy da db "
    "dc dd de di dl do ds dt du dy ea eb ec ed ee ef eg eh ei el em en ep eq er es "
    "et ev ew ex ey fa fe ff fi fl fo fp fr ft fu fy ga ge gg gh gi gl gm gn go gr "
    "gs gt gu ha he hi hm ho hr ht hu hy ia ib ic id ie if ig ii ik il im in io ip "
    "ir is it iv ix iz je ju ka ke kg ki kn kp kr ks ku kw la lc ld le lf li ll lo "
    "lp lr ls lt lu lv lw ly ma mb me mi mm mn mo mp mr ms mt mu my na nb nc nd ne "
    "nf ng nh ni nl nm nn no np ns nt nu nv ny oa ob oc od oe of og oi ok ol om on "
    "oo op or os ot ou ov ow ox oz pa pd pe ph pi pl pn po pp pr ps pt pu py qu ra "
    "rb rc rd re rf rg ri rk rl rm rn ro rp rr rs rt ru rv rw ry sa sc se sf sh si "
    "sk sl sm sn so sp sq ss st su sw sy ta tc td te tf th ti tl tm tn to tp tr ts "
    "tt tu tw ty ua ub uc ud ue uf ug ui ul um un uo up ur us ut va ve vi vm vo wa "
    "we wh wi wl wn wo wr ws xa xc xe xi xo xp xs xt xx yc ye yi yl ym yn yo yp ys "
    "yt yw za ze zi ".split()
)


def _all_in(text: str, allowed: frozenset[str]) -> bool:
    return bool(text) and all(char in allowed for char in text)


def _is_suffix(token: str) -> bool:
    word = token.lower()
    if word in _VOLUME_WORDS or word in _EXTENSIONS:
        return True
    if word.startswith("part"):
        return _all_in(word[4:], _DIGITS)
    if word.startswith("vol"):
        first, _, second = word[3:].replace("-", "+").partition("+")
        return _all_in(first, _DIGITS) and _all_in(second, _DIGITS)
    if word.startswith("r") and 2 <= len(word) - 1 <= 3:
        return _all_in(word[1:], _DIGITS)
    return len(word) == 3 and _all_in(word, _DIGITS)


def stem_of(name: str) -> str:
    """The name without its archive/volume suffixes and one file extension."""
    end = len(name)
    while (dot := name.rfind(".", 0, end)) >= 0 and 0 < end - dot - 1 <= _LONGEST_SUFFIX:
        if not _is_suffix(name[dot + 1 : end]):
            break
        end = dot
    return name[:end]


def _is_hash_like(token: str) -> bool:
    if len(token) >= HEX_TOKEN and _all_in(token, _HEX):
        return True
    if not token.isalnum():
        return False
    if len(token) >= LONG_TOKEN:
        return True
    if len(token) < MIXED_TOKEN:
        return False
    changes = 0
    previous_digit: bool | None = None
    for char in token:
        digit = char in _DIGITS
        if previous_digit is not None and digit != previous_digit:
            changes += 1
        previous_digit = digit
    return changes >= MIXED_CHANGES


def _is_gibberish(token: str) -> bool:
    """Random letters: rare letter pairs, or hardly a vowel (see the module's text)."""
    low = token.lower()
    if len(low) < LETTERS_TOKEN or not _all_in(low, _LETTERS):
        return False
    rare = sum(1 for index in range(len(low) - 1) if low[index : index + 2] not in _COMMON_BIGRAMS)
    vowels = sum(1 for char in low if char in _VOWELS)
    return rare >= RARE_BIGRAMS or vowels * VOWEL_SHARE < len(low)


def is_word(token: str) -> bool:
    """A token that names something: three letters or more, not hash-like, not gibberish."""
    letters = sum(1 for char in token if char.isalpha())
    return letters >= MIN_WORD_LETTERS and not _is_hash_like(token) and not _is_gibberish(token)


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    start = 0
    for index, char in enumerate(text):
        if char in _SEPARATORS:
            if index > start:
                tokens.append(text[start:index])
            start = index + 1
    if len(text) > start:
        tokens.append(text[start:])
    return tokens


def is_obfuscated(name: str) -> bool:
    """Whether ``name`` (a release or a file name) has no word: see the module's text."""
    stem = stem_of(name.strip()[:MAX_NAME])
    tokens = _tokens(stem)
    if any(is_word(token) for token in tokens):
        return False
    return not _short_title_and_tags(stem, tokens)


def _short_title_and_tags(stem: str, tokens: list[str]) -> bool:
    """A short word (one or two letters) beside a year, a quality tag or an episode."""
    if not any(_all_in(token.lower(), _LETTERS) for token in tokens):
        return False
    parsed = parse_release_name(stem)
    tagged = parsed.year or parsed.resolution or parsed.source or parsed.codec or parsed.episodes
    return bool(parsed.title) and bool(tagged)
