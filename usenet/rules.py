"""The subject rule set: which posts are binary segments, and which file each belongs to.

Node and coordinator derive a file's identity with this same code, so everything
that decides it lives here and nothing depends on the machine. What the identity
is: docs/seed-node.md ("Subject rules and file identity").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from hashlib import blake2b
from typing import Any, NamedTuple

from .limits import MAX_TOTAL
from .linear import LinearPattern, PatternError, compile_linear

__all__ = [
    "FILE_KEY_PERSON",
    "ParsedSubject",
    "RuleSet",
    "SegmentCounter",
    "SubjectShape",
    "file_key",
    "keyed_digest",
]

FILE_KEY_PERSON = b"usenet-file-v1"


def file_key(group: str, poster: str, key_subject: str, total: int) -> bytes:
    """The 16-byte identity of a file, as the coordinator stores it.

    BLAKE2b with digest_size=16 and person=b"usenet-file-v1" over, in this order:
    for each of group, poster and key_subject, the 4-byte big-endian length of its
    UTF-8 encoding followed by that encoding; then total as an 8-byte big-endian
    unsigned integer. Length prefixes keep ("ab", "c") apart from ("a", "bc").
    The strings are used exactly as given: the group name as the server spells it,
    the poster as decoded from the overview line, the key subject from
    ``RuleSet.parse_subject``.
    """
    return keyed_digest(FILE_KEY_PERSON, (group, poster, key_subject), total)


def keyed_digest(person: bytes, texts: tuple[str, ...], number: int) -> bytes:
    """16-byte BLAKE2b (personalized) over length-prefixed UTF-8 texts, then `number`.

    Each text goes in as its 4-byte big-endian length and its bytes, then the
    number as 8 bytes big-endian; the layout `file_key` documents.
    """
    digest = blake2b(digest_size=16, person=person)
    for text in texts:
        data = text.encode("utf-8")
        digest.update(len(data).to_bytes(4, "big"))
        digest.update(data)
    digest.update(number.to_bytes(8, "big"))
    return digest.digest()


class SubjectShape(NamedTuple):
    """What a subject says apart from its segment counter (the same for every segment)."""

    key_subject: str
    name: str
    file_index: int | None
    file_count: int | None


class ParsedSubject(NamedTuple):
    """A binary post's subject, read under a rule set."""

    part: int
    total: int
    name: str  # the file name; the key subject when no name could be found
    file_index: int | None  # "[03/12]" gives 3 and 12; None when the subject has none
    file_count: int | None
    key_subject: str


class SegmentCounter(NamedTuple):
    """A subject cut at its segment counter."""

    head: str
    part: int
    total: int
    tail: str


# Default patterns. A counter is one to six digits: enough for any real post, and a
# bound that keeps "(1999)" or a long number from reading as a counter.
DEFAULT_SEGMENT_COUNTER = r"[(\[]\s*(?P<part>\d{1,6})\s*/\s*(?P<total>\d{1,6})\s*[)\]]"
DEFAULT_FILE_COUNTERS = (
    r"\[\s*(?P<index>\d{1,5})\s*/\s*(?P<count>\d{1,5})\s*\]",
    r"\(\s*(?P<index>\d{1,5})\s*/\s*(?P<count>\d{1,5})\s*\)",
    r"(?i)\bfile\s+(?P<index>\d{1,5})\s+of\s+(?P<count>\d{1,5})\b",
    r"(?i)\b(?P<index>\d{1,5})\s+of\s+(?P<count>\d{1,5})\b",
)
DEFAULT_STRIP = (
    r"(?i)\byenc\b",
    # Size hints: some posters print the segment's own size, which differs per segment.
    r"(?i)\b\d+(?:[.,]\d+)?\s*(?:[kmgt]i?b|bytes)\b",
    # Separators left dangling at either end once counters and hints are gone.
    # Two anchored patterns rather than one alternation: under RE2 each is one pass
    # over the subject, and neither retries a run of separators from every start.
    r"^[\s\-|:,]+",
    r"[\s\-|:,]+$",
)
DEFAULT_FILENAME = (
    r'"(?P<name>[^"]+)"',
    # A token with an extension: "name.vol00+01.par2", "file.7z.001", standing alone
    # (no word character or dot on either side). A three-digit extension wants a
    # letter before it, so "1.500" in a size hint is not a file name. Written for
    # RE2 (usenet/linear.py): the context is matched, not looked around.
    r"(?:^|[^\w.])(?P<name>\w[\w.+~-]*\.[A-Za-z][A-Za-z0-9]{1,4}"
    r"|(?:[A-Za-z]|\w[\w.+~-]*[A-Za-z])[\w.+~-]*\.\d{3})(?:[^\w.]|$)",
)

# Parsing a subject is cached by its text minus the segment counter: every segment
# of a file shares it. Cleared when full so memory stays bounded.
_SHAPE_CACHE_LIMIT = 1 << 17
_SEGMENT_GROUPS = ("_head", "part", "total", "_tail")
_FILE_COUNTER_GROUPS = ("index", "count")
_NAME_GROUP = ("name",)


@dataclass(frozen=True)
class RuleSet:
    """A versioned set of subject rules. Patterns are RE2 syntax (usenet/linear.py).

    ``segment_counter`` must define groups ``part`` and ``total``; the LAST match in
    a subject is the segment counter (in "(1/2) \"x\" [1/5]" it is "[1/5]"). It is
    embedded in a larger pattern, as a group: a flag such as "(?i)" applies inside it.
    ``file_counters`` (groups ``index``, ``count``) are tried in order on the subject
    without its segment counter; the first that matches is the file counter.
    ``strip`` patterns are replaced by a space, in order, on that same text, and then
    whitespace is collapsed: the result is the key subject. ``filename`` patterns
    (group ``name``) are tried in order; the first that matches names the file.
    A post whose poster matches any ``poster_exclude`` pattern is not indexed.
    A total outside ``min_total``..``max_total``, or a part outside 1..total, is not
    a binary segment.
    """

    version: int
    segment_counter: str = DEFAULT_SEGMENT_COUNTER
    file_counters: tuple[str, ...] = DEFAULT_FILE_COUNTERS
    strip: tuple[str, ...] = DEFAULT_STRIP
    filename: tuple[str, ...] = DEFAULT_FILENAME
    poster_exclude: tuple[str, ...] = ()
    min_total: int = 1
    max_total: int = 100_000

    _segment_re: LinearPattern = field(init=False, repr=False, compare=False)
    _file_counter_res: tuple[LinearPattern, ...] = field(init=False, repr=False, compare=False)
    _strip_res: tuple[LinearPattern, ...] = field(init=False, repr=False, compare=False)
    _filename_res: tuple[LinearPattern, ...] = field(init=False, repr=False, compare=False)
    _poster_exclude_res: tuple[LinearPattern, ...] = field(init=False, repr=False, compare=False)
    _segment_groups: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _default_counter: bool = field(init=False, repr=False, compare=False)
    _shapes: dict[str, SubjectShape] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.version) is not int or self.version < 1:
            raise ValueError(
                f"The rule set version must be a positive integer, not {self.version!r}."
            )
        if type(self.min_total) is not int or type(self.max_total) is not int:
            raise ValueError("min_total and max_total must be integers.")
        if not 1 <= self.min_total <= self.max_total <= MAX_TOTAL:
            raise ValueError(
                f"min_total ({self.min_total}) must be at least 1 and at most max_total"
                f" ({self.max_total}), which is at most {MAX_TOTAL} (the most parts a"
                " file may have)."
            )
        for name in ("file_counters", "strip", "filename", "poster_exclude"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise ValueError(f"{name} must be a list of regular expressions (strings).")
            object.__setattr__(self, name, tuple(value))  # lists from JSON become hashable
        if not isinstance(self.segment_counter, str):
            raise ValueError("segment_counter must be a regular expression (a string).")

        _compile("segment_counter", self.segment_counter, required=("part", "total"))
        # Greedy head: the regex engine backs off from the end, so the counter it finds
        # is the last one in the subject, usually within a few characters.
        segment = _compile(
            "segment_counter",
            rf"(?P<_head>.*)(?:{self.segment_counter})(?P<_tail>.*)",
            dotall=True,
        )
        set_ = object.__setattr__
        set_(self, "_segment_re", segment)
        set_(self, "_segment_groups", segment.numbers(_SEGMENT_GROUPS))
        set_(self, "_default_counter", self.segment_counter == DEFAULT_SEGMENT_COUNTER)
        set_(
            self,
            "_file_counter_res",
            tuple(
                _compile("file_counters", p, required=("index", "count"))
                for p in self.file_counters
            ),
        )
        set_(self, "_strip_res", tuple(_compile("strip", p) for p in self.strip))
        set_(
            self,
            "_filename_res",
            tuple(_compile("filename", p, required=("name",)) for p in self.filename),
        )
        set_(
            self,
            "_poster_exclude_res",
            tuple(_compile("poster_exclude", p) for p in self.poster_exclude),
        )
        set_(self, "_shapes", {})

    @classmethod
    def default(cls) -> RuleSet:
        return cls(version=1)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe form the coordinator stores and hands to nodes."""
        return {
            "version": self.version,
            "segment_counter": self.segment_counter,
            "file_counters": list(self.file_counters),
            "strip": list(self.strip),
            "filename": list(self.filename),
            "poster_exclude": list(self.poster_exclude),
            "min_total": self.min_total,
            "max_total": self.max_total,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSet:
        """Read ``to_dict()``'s form back; every field is required and none may be unknown.

        Strict on purpose: a node that ignored a field it does not know would derive
        file identities that differ from the coordinator's without anyone noticing.
        """
        if not isinstance(data, dict):
            raise ValueError("A rule set must be a JSON object.")
        known = [f.name for f in fields(cls) if f.init]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(
                f"The rule set has fields this code does not know: {', '.join(unknown)};"
                " update the node agent."
            )
        missing = [name for name in known if name not in data]
        if missing:
            raise ValueError(f"The rule set lacks the fields: {', '.join(missing)}.")
        return cls(**data)

    # --- reading subjects -----------------------------------------------------------

    def split_segment_counter(self, subject: str) -> SegmentCounter | None:
        """Cut a subject at its last counter; None when it has no valid one."""
        if self._default_counter:
            found = last_default_counter(subject)
            if found is None:
                return None
            head, part, total, tail = found
        else:
            match = self._segment_re.match(subject, self._segment_groups)
            if match is None or not match[1] or not match[2]:  # optional groups left out
                return None
            head, part, total, tail = match[0], int(match[1]), int(match[2]), match[3]
        if not (self.min_total <= total <= self.max_total and 1 <= part <= total):
            return None
        return SegmentCounter(head, part, total, tail)

    def shape(self, head: str, tail: str) -> SubjectShape:
        """Key subject, file name and file counter of a subject cut at its segment counter."""
        rest = f"{head} {tail}" if tail else head
        shape = self._shapes.get(rest)
        if shape is None:
            shape = self._read_shape(rest)
            if len(self._shapes) >= _SHAPE_CACHE_LIMIT:
                self._shapes.clear()
            self._shapes[rest] = shape
        return shape

    def _read_shape(self, rest: str) -> SubjectShape:
        file_index = file_count = None
        for pattern in self._file_counter_res:
            counter = pattern.search(rest, pattern.numbers(_FILE_COUNTER_GROUPS))
            if counter is not None and counter[0] and counter[1]:
                file_index, file_count = int(counter[0]), int(counter[1])
                break
        key_subject = rest
        for pattern in self._strip_res:
            key_subject = pattern.sub(" ", key_subject)
        key_subject = " ".join(key_subject.split())
        name = key_subject
        for pattern in self._filename_res:
            found = pattern.search(rest, pattern.numbers(_NAME_GROUP))
            if found is not None:
                name = found[0].strip() or key_subject
                break
        return SubjectShape(key_subject, name, file_index, file_count)

    def parse_subject(self, subject: str) -> ParsedSubject | None:
        """Read a binary post's subject; None when it is not one (no segment counter)."""
        counter = self.split_segment_counter(subject)
        if counter is None:
            return None
        shape = self.shape(counter.head, counter.tail)
        return ParsedSubject(
            counter.part,
            counter.total,
            shape.name,
            shape.file_index,
            shape.file_count,
            shape.key_subject,
        )

    def is_binary(self, subject: str) -> bool:
        return self.split_segment_counter(subject) is not None

    def excludes_poster(self, poster: str) -> bool:
        return any(pattern.contains(poster) for pattern in self._poster_exclude_res)

    def identify(self, group: str, poster: str, subject: str) -> bytes | None:
        """The file key of a post (any of its segments), or None when it is not binary."""
        parsed = self.parse_subject(subject)
        if parsed is None:
            return None
        return file_key(group, poster, parsed.key_subject, parsed.total)


# --- the default segment counter, read without RE2 ---------------------------------
#
# Every line a node reads goes through the segment counter, and a call into RE2
# costs several times a short match under ``re`` (docs/performance.md, "Subject
# rules in linear time"). The default counter is read here without one, with the same
# result as DEFAULT_SEGMENT_COUNTER under RE2 (tests/usenet/test_rules.py
# compares the two on generated subjects). Linear: candidates are the opening
# brackets from the right, each found by one rfind that resumes where the last
# stopped, and a reading from one bracket stops at the first character that is not
# a space, digit or slash, so no character is read twice by two candidates.

_SPACES = " \t\n\r\f"  # RE2's \s


def last_default_counter(subject: str) -> tuple[str, int, int, str] | None:
    """(head, part, total, tail) at the last default segment counter; None when none."""
    paren = subject.rfind("(")
    bracket = subject.rfind("[")
    while paren >= 0 or bracket >= 0:
        start = paren if paren > bracket else bracket
        tight = _TIGHT_COUNTER.match(subject, start)
        if tight is not None:
            return subject[:start], int(tight[1]), int(tight[2]), subject[tight.end() :]
        found = _spaced_counter_at(subject, start)
        if found is not None:
            part, total, end = found
            return subject[:start], part, total, subject[end:]
        if start == paren:
            paren = subject.rfind("(", 0, start)
        else:
            bracket = subject.rfind("[", 0, start)
    return None


# The usual counter has no spaces: "(1/5)". Read by ``re`` because this pattern
# cannot backtrack far: anchored at one position, with only bounded repeats, it
# tries at most 6 x 6 ways over at most 15 characters, whatever the subject. A
# subject it does not fit (spaces, 7 digits) is read by `_spaced_counter_at`.
_TIGHT_COUNTER = re.compile(r"[(\[]([0-9]{1,6})/([0-9]{1,6})[)\]]")


def _spaced_counter_at(text: str, start: int) -> tuple[int, int, int] | None:
    """(part, total, end) of "[ 1 / 5 ]" read at ``start``; None if not a counter."""
    numbers = []
    pos = start + 1
    for last in (False, True):
        pos = _skip(text, pos, _SPACES)
        digits_end = _skip(text, pos, "0123456789")
        if not 1 <= digits_end - pos <= 6:  # \d{1,6} and no further digit
            return None
        numbers.append(int(text[pos:digits_end]))
        pos = _skip(text, digits_end, _SPACES)
        if text[pos : pos + 1] not in ((")", "]") if last else ("/",)):
            return None
        pos += 1
    return numbers[0], numbers[1], pos


def _skip(text: str, pos: int, characters: str) -> int:
    end = len(text)
    while pos < end and text[pos] in characters:
        pos += 1
    return pos


def _compile(
    field_name: str, pattern: str, *, required: tuple[str, ...] = (), dotall: bool = False
) -> LinearPattern:
    """A rule pattern compiled to run in linear time; ValueError says what to change."""
    try:
        compiled = compile_linear(pattern, dotall=dotall)
    except PatternError as error:
        raise ValueError(
            f"The {field_name} pattern {pattern!r} cannot be used: {error}. Rule patterns"
            " run under RE2, in time linear in the text: no lookaround, no backreferences."
        ) from None
    missing = [name for name in required if name not in compiled.groupindex]
    if missing:
        raise ValueError(
            f"The {field_name} pattern {pattern!r} must define the named groups"
            f" {', '.join(required)}; it lacks {', '.join(missing)}."
        )
    return compiled
