"""Whether a release name is obfuscated: no word in it, or a hash-like stem (issue 26).

A poster who hides a release names its files with random strings
(``a8f7d6e5c4b3``, ``b1c2d3.part01.rar``, a 40-digit hex digest); the real
names are only inside the files, and the coordinator plans an inspection
for such a release (inspections/planning.py, ``INSPECT_RELEASES=obfuscated``).

Two tests, each one linear pass over at most ``MAX_LOOKED_AT`` characters,
without a regular expression:

- no word: no run of three or more letters holding a vowel (``Title``,
  ``HDTV-DIMENSION`` has one), and no run of two or more non-ASCII letters
  (a name in another script);
- a hash-like stem: the name (its file extensions aside) is one token with
  no separator, at least ``HASH_MIN_LENGTH`` long, whose runs of one kind
  (digits, upper-case, lower-case letters) are ``HASH_RUN_MOST`` long or
  shorter on average (``xK9fQ2LmZp7TbWcR``, ``k3j9xq2m8zt4``; not
  ``MovieName2019Remux``), or that is hexadecimal with digits and letters,
  ``HEX_MIN_LENGTH`` or longer (a digest).

No Django: the node agent may import this module.
"""

from __future__ import annotations

MAX_LOOKED_AT = 512
HASH_MIN_LENGTH = 12
HASH_RUN_MOST = 2  # the mean length of its runs of one kind, at most
HEX_MIN_LENGTH = 16
WORD_MIN_LETTERS = 3
VOWELS = frozenset("aeiouyAEIOUY")
HEX = frozenset("0123456789abcdefABCDEF")
# Extensions stripped from the end of a name before its stem is judged (one
# archive or par2 chain: "x.part01.rar", "x.vol03+04.par2", "x.7z.001", "x.r00").
EXTENSIONS = frozenset(
    ("rar", "par2", "par", "7z", "zip", "nfo", "sfv", "srr", "nzb", "mkv", "mp4", "avi", "iso",
     "bin", "txt", "jpg", "png", "001")
)  # fmt: skip


def is_obfuscated(name: str) -> bool:
    """True when `name` has no word, or its stem is hash-like."""
    stem = name_stem(name[:MAX_LOOKED_AT])
    return not has_word(stem) or is_hash_like(stem)


def name_stem(name: str) -> str:
    """`name` without its trailing file extensions (at most three: ``.part01.rar``)."""
    stem = name.strip()
    for _ in range(3):
        head, dot, extension = stem.rpartition(".")
        if not dot or not head or not _is_extension(extension.lower()):
            break
        stem = head
    return stem


def _is_extension(extension: str) -> bool:
    if extension in EXTENSIONS:
        return True
    if len(extension) == 3 and extension[0] == "r" and _all_digits(extension[1:]):
        return True  # .r00 .. .r99
    if extension.startswith("part") and 5 <= len(extension) <= 8:
        return _all_digits(extension[4:])  # .part01
    if extension.startswith("vol") and "+" in extension:
        return True  # .vol03+04
    return 2 <= len(extension) <= 3 and _all_digits(extension)  # .7z.001, .002


def _all_digits(text: str) -> bool:
    return bool(text) and all("0" <= c <= "9" for c in text)


def has_word(text: str) -> bool:
    """A run of WORD_MIN_LETTERS ASCII letters with a vowel, or of two non-ASCII letters."""
    run = 0
    vowel = False
    foreign = 0
    for char in text:
        if char.isalpha():
            if char.isascii():
                run += 1
                vowel = vowel or char in VOWELS
                foreign = 0
                if run >= WORD_MIN_LETTERS and vowel:
                    return True
            else:
                foreign += 1
                run, vowel = 0, False
                if foreign >= 2:
                    return True
        else:
            run, vowel, foreign = 0, False, 0
    return False


def is_hash_like(stem: str) -> bool:
    """One token with no separator that reads like a digest or a random string."""
    length = len(stem)
    if length < HASH_MIN_LENGTH or not stem.isascii() or not stem.isalnum():
        return False
    runs = 0
    digits = letters = 0
    hexadecimal = True
    previous = ""
    for char in stem:
        kind = "d" if "0" <= char <= "9" else ("u" if char.isupper() else "l")
        if kind == "d":
            digits += 1
        else:
            letters += 1
        hexadecimal = hexadecimal and char in HEX
        if kind != previous:
            runs += 1
        previous = kind
    if hexadecimal and digits and letters and length >= HEX_MIN_LENGTH:
        return True
    return runs * HASH_RUN_MOST >= length
