"""What a node's inspection found, checked and applied to a release (issue 26).

A node fetches a release's par2 index, nfo and first archive volume, parses
them (`inspection.inspect_article`) and reports one `InspectResult.to_json()`
per role. That report is hostile input: `validate_report` bounds every list,
string and number, refuses unknown roles and formats, and raises
`core.errors.Invalid` with a sentence the node's operator can act on (the API
answers 400 with it). `apply_inspection` then, in the caller's transaction
with the release row locked:

- chooses the release's name by the ordered rules of docs/inspection.md,
  "Which name wins" (`choose_name`), keeping the poster's name as `posted_name`;
- reads the new name into its fields and decides its category again, as the
  batch path does (catalog.release_fields);
- marks it `passworded` / `encrypted`, records the nfo's IMDb and TVDB ids;
- maps its obfuscated file names to the real ones (`match_files`), which the
  NZB carries as `<meta type="x-real-name">` (catalog.nzb);
- stores a summary for the admin in `inspection`.

Asking for a release to be inspected again (the admin's "re-inspect",
`manage.py reinspect`) queues work in the `inspections` app, a layer above
the catalog: that app registers its queueing function here at start-up
(`register_requeue`), so the catalog never imports it.
"""

from __future__ import annotations

import json
import unicodedata
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.errors import Invalid, NotFound, Unavailable
from inspection import MAX_REPORTED_FILES, MAX_REPORTED_NAME, ROLES
from inspection.nfo import scene_like
from usenet.numbers import ascii_digits, whole_number
from usenet.obfuscation import is_obfuscated, stem_of
from usenet.release_names import MAX_NAME_LENGTH, parse_release_name

from .nzb import REAL_NAME_ARROW
from .release_fields import decide_category, field_params, read_name
from .rulesets import category_rules, current_rules
from .sql import queries

__all__ = [
    "Applied",
    "Choice",
    "Missing",
    "Report",
    "ReportedFile",
    "ReportedResult",
    "apply_inspection",
    "choose_name",
    "match_files",
    "register_requeue",
    "request_reinspection",
    "validate_report",
]

# --- the report's bounds ---------------------------------------------------------

FORMATS = {"par2": ("par2",), "nfo": ("nfo",), "archive": ("rar4", "rar5", "7z", "zip")}
MAX_SIZE = 2**48  # bytes: the yEnc parser refuses more
MAX_IDS = 16
MAX_RELEASE_NAMES = 8
MAX_NOTES = 32
MAX_ERRORS = 8
MAX_TEXT = 1000  # characters of a note, an error or a part's name
MAX_MESSAGE_ID = 250  # RFC 5536's limit
TVDB_MAX = 2**31 - 1  # the column is an integer
HEX = frozenset("0123456789abcdef")

# --- applying ----------------------------------------------------------------------

# Files read to match names: a release of more is matched by exact sizes only.
MAX_RELEASE_FILES = 5000
# A catalog file's bytes (its articles as the overview counts them: yEnc
# escapes, line ends and headers) against the real size a FileDesc gives:
# at least the size, at most this much more (yEnc adds about 2 % on
# compressed data, 100 % only on a file of escapes) plus a header per segment.
YENC_OVERHEAD = 1.1
ARTICLE_HEADER_BYTES = 4096
# Files that name a set but are no part of its content.
EXTRA_EXTENSIONS = frozenset(("nfo", "sfv", "srr", "nzb", "jpg", "jpeg", "png", "txt", "url"))
SUMMARY_FILES = 50  # files of each result kept in the admin's summary
SUMMARY_CANDIDATES = 20


@dataclass(frozen=True, slots=True)
class ReportedFile:
    name: str
    size: int | None
    encrypted: bool | None = None
    packed_size: int | None = None
    md5: str | None = None


@dataclass(frozen=True, slots=True)
class ReportedResult:
    """One role's result, as `inspection.InspectResult` has it, checked."""

    role: str
    format: str | None = None
    yenc_name: str | None = None
    yenc_size: int | None = None
    files: tuple[ReportedFile, ...] = ()
    files_truncated: bool = False
    imdb_ids: tuple[str, ...] = ()
    tvdb_ids: tuple[int, ...] = ()
    release_names: tuple[str, ...] = ()
    volume: bool | None = None
    solid: bool | None = None
    headers_encrypted: bool | None = None
    passworded: bool | None = None
    archive_size: int | None = None
    complete: bool | None = None
    notes: tuple[str, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()  # (part, error)


@dataclass(frozen=True, slots=True)
class Missing:
    """An article the node could not fetch."""

    role: str
    message_id: str
    error: str


@dataclass(frozen=True, slots=True)
class Report:
    results: tuple[ReportedResult, ...] = ()
    missing: tuple[Missing, ...] = ()

    def result(self, role: str) -> ReportedResult | None:
        return next((r for r in self.results if r.role == role), None)


@dataclass(frozen=True, slots=True)
class Applied:
    release_id: int
    name: str
    category: int
    renamed: bool
    passworded: bool
    encrypted: bool
    why: str  # which rule named it, or why it kept its name
    rule: str = "posted"  # "nfo", "par2", "archive" or "posted"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.release_id,
            "name": self.name,
            "category": self.category,
            "renamed": self.renamed,
            "passworded": self.passworded,
            "encrypted": self.encrypted,
            "why": self.why,
        }


# --- validating ----------------------------------------------------------------------


def _where(path: str) -> str:
    return path or "the report"


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"{_where(path)} must be a JSON object.")
    return value


def _list(value: Any, path: str, most: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"{path} must be a list.")
    if len(value) > most:
        raise Invalid(f"{path} has {len(value)} entries; at most {most} are accepted.")
    return value


def _text(
    value: Any, path: str, most: int, *, required: bool = False, sentence: bool = False
) -> str | None:
    """A string of at most `most` characters that PostgreSQL can store. A `sentence`
    (a note, an error: the agent's own words) holds no format character either."""
    if value is None:
        if required:
            raise Invalid(f"{path} is required.")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{path} must be a string.")
    if len(value) > most:
        raise Invalid(f"{path} is {len(value)} characters long; at most {most} are accepted.")
    if "\x00" in value:
        raise Invalid(f"{path} holds a NUL character, which no name or sentence may carry.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # JSON's "\ud800" escape: a lone surrogate, which is no character at all.
        raise Invalid(
            f"{path} is not valid Unicode text: it holds a lone surrogate (such as \\ud800), "
            "which UTF-8 cannot encode; send the text as the agent decoded it."
        ) from None
    if sentence and (hidden := _hidden_character(value)) is not None:
        raise Invalid(
            f"{path} holds the invisible character U+{ord(hidden):04X} (a Unicode format "
            "character or a line separator), which no sentence may carry."
        )
    return value


def _size(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if type(value) is not int or not 0 <= value <= MAX_SIZE:
        raise Invalid(f"{path} must be a whole number of bytes from 0 to {MAX_SIZE}, or null.")
    return value


def _flag(value: Any, path: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise Invalid(f"{path} must be true, false or null.")


def _hex(value: Any, path: str) -> str | None:
    text = _text(value, path, 32)
    if text is not None and (len(text) != 32 or not set(text) <= HEX):
        raise Invalid(f"{path} must be 32 lower-case hexadecimal digits (an MD5), or null.")
    return text


def _imdb_id(value: Any, path: str) -> str:
    text = _text(value, path, 10, required=True) or ""
    digits = text[2:]
    if not text.startswith("tt") or not 7 <= len(digits) <= 8 or not ascii_digits(digits):
        raise Invalid(f'{path} must be an IMDb id: "tt" and 7 or 8 digits, such as "tt0111161".')
    return text


def _tvdb_id(value: Any, path: str) -> int:
    text = _text(value, path, 10, required=True) or ""
    try:
        return whole_number(text, low=1, high=TVDB_MAX)
    except ValueError:
        raise Invalid(
            f"{path} must be a TVDB series id: digits, from 1 to {TVDB_MAX}, as a string."
        ) from None


def _file(value: Any, path: str) -> ReportedFile:
    item = _object(value, path)
    return ReportedFile(
        name=_text(item.get("name"), f"{path}.name", MAX_REPORTED_NAME, required=True) or "",
        size=_size(item.get("size"), f"{path}.size"),
        encrypted=_flag(item.get("encrypted"), f"{path}.encrypted"),
        packed_size=_size(item.get("packed_size"), f"{path}.packed_size"),
        md5=_hex(item.get("md5"), f"{path}.md5"),
    )


def _error(value: Any, path: str) -> tuple[str, str]:
    item = _object(value, path)
    return (
        _text(item.get("part"), f"{path}.part", 40, required=True, sentence=True) or "",
        _text(item.get("error"), f"{path}.error", MAX_TEXT, required=True, sentence=True) or "",
    )


def _result(value: Any, path: str) -> ReportedResult:
    item = _object(value, path)
    role = item.get("role")
    if role not in ROLES:
        raise Invalid(f"{path}.role must be one of {', '.join(ROLES)}.")
    form = item.get("format")
    if form is not None and form not in FORMATS[role]:
        raise Invalid(
            f"{path}.format must be null or one of {', '.join(FORMATS[role])} for the {role}."
        )
    yenc = item.get("yenc")
    header = _object(yenc, f"{path}.yenc") if yenc is not None else {}
    return ReportedResult(
        role=role,
        format=form,
        yenc_name=_text(header.get("name"), f"{path}.yenc.name", MAX_REPORTED_NAME),
        yenc_size=_size(header.get("size"), f"{path}.yenc.size"),
        files=tuple(
            _file(f, f"{path}.files[{n}]")
            for n, f in enumerate(_list(item.get("files"), f"{path}.files", MAX_REPORTED_FILES))
        ),
        files_truncated=bool(_flag(item.get("files_truncated"), f"{path}.files_truncated")),
        imdb_ids=tuple(
            _imdb_id(i, f"{path}.imdb_ids[{n}]")
            for n, i in enumerate(_list(item.get("imdb_ids"), f"{path}.imdb_ids", MAX_IDS))
        ),
        tvdb_ids=tuple(
            _tvdb_id(i, f"{path}.tvdb_ids[{n}]")
            for n, i in enumerate(_list(item.get("tvdb_ids"), f"{path}.tvdb_ids", MAX_IDS))
        ),
        release_names=tuple(
            _text(name, f"{path}.release_names[{n}]", MAX_REPORTED_NAME, required=True) or ""
            for n, name in enumerate(
                _list(item.get("release_names"), f"{path}.release_names", MAX_RELEASE_NAMES)
            )
        ),
        volume=_flag(item.get("volume"), f"{path}.volume"),
        solid=_flag(item.get("solid"), f"{path}.solid"),
        headers_encrypted=_flag(item.get("headers_encrypted"), f"{path}.headers_encrypted"),
        passworded=_flag(item.get("passworded"), f"{path}.passworded"),
        archive_size=_size(item.get("archive_size"), f"{path}.archive_size"),
        complete=_flag(item.get("complete"), f"{path}.complete"),
        notes=tuple(
            _text(note, f"{path}.notes[{n}]", MAX_TEXT, required=True, sentence=True) or ""
            for n, note in enumerate(_list(item.get("notes"), f"{path}.notes", MAX_NOTES))
        ),
        errors=tuple(
            _error(e, f"{path}.errors[{n}]")
            for n, e in enumerate(_list(item.get("errors"), f"{path}.errors", MAX_ERRORS))
        ),
    )


def _missing(value: Any, path: str) -> Missing:
    item = _object(value, path)
    role = item.get("role")
    if role not in ROLES:
        raise Invalid(f"{path}.role must be one of {', '.join(ROLES)}.")
    return Missing(
        role=role,
        message_id=_text(
            item.get("message_id"), f"{path}.message_id", MAX_MESSAGE_ID, required=True
        )
        or "",
        error=_text(item.get("error"), f"{path}.error", MAX_TEXT, required=True, sentence=True)
        or "",
    )


def validate_report(payload: Any) -> Report:
    """A node's report (`results`, `missing`; the API reads `epoch`), checked and bounded.

    At most one result and one missing article per role; every string, list
    and number within the bounds above. Keys this version does not know are
    ignored (a newer agent may send more); a wrong type or a value out of
    bounds is `Invalid`, naming the field.
    """
    body = _object(payload, "")
    results = tuple(
        _result(r, f"results[{n}]")
        for n, r in enumerate(_list(body.get("results"), "results", len(ROLES)))
    )
    missing = tuple(
        _missing(m, f"missing[{n}]")
        for n, m in enumerate(_list(body.get("missing"), "missing", len(ROLES)))
    )
    if not results and not missing:
        raise Invalid(
            "The report names no result and no missing article: send a result for each "
            "article fetched, and each one that could not be fetched in missing."
        )
    for what, roles in (
        ("results", [r.role for r in results]),
        ("missing", [m.role for m in missing]),
    ):
        for role in ROLES:
            if roles.count(role) > 1:
                raise Invalid(f"{what} names the {role} more than once; send one entry per role.")
    return Report(results, missing)


# --- which name wins -----------------------------------------------------------------


@dataclass(slots=True)
class Choice:
    """The name the rules chose (None: none won), the rule, and what was refused on the way."""

    name: str | None
    rule: str
    why: str
    refused: list[dict[str, str]] = field(default_factory=list)


def _extension(name: str) -> str:
    dot = name.rfind(".")
    return name[dot + 1 :].lower() if dot >= 0 else ""


def _basename(name: str) -> str:
    return name[max(name.rfind("/"), name.rfind("\\")) + 1 :]


def has_control(text: str) -> bool:
    """Whether `text` holds a C0 or C1 control character (or DEL): no name carries one."""
    return any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in text)


_SEPARATORS = frozenset("\u2028\u2029")


def _hidden_character(text: str) -> str | None:
    """The first character of `text` that shows other than it reads: a Unicode format
    character (category Cf: the bidi overrides such as U+202E, zero-width characters,
    the soft hyphen) or a line or paragraph separator (U+2028, U+2029). One pass."""
    return next(
        (char for char in text if char in _SEPARATORS or unicodedata.category(char) == "Cf"),
        None,
    )


def _usable(name: str, source: str, refused: list[dict[str, str]]) -> str | None:
    """The candidate trimmed, or None (and why, in `refused`) when it cannot be a release's
    name. An nfo's candidate must be a release name by the nfo parser's own rule
    (`inspection.nfo.scene_like`); a par2 or archive candidate, a plain file name."""
    trimmed = name.strip(" ._-")
    reason = None
    if not trimmed:
        reason = "empty"
    elif has_control(trimmed):
        reason = "holds a control character"
    elif (hidden := _hidden_character(trimmed)) is not None:
        reason = f"holds the invisible character U+{ord(hidden):04X}"
    elif len(trimmed) > MAX_NAME_LENGTH:
        reason = f"longer than {MAX_NAME_LENGTH} characters"
    elif source == "nfo" and not scene_like(trimmed):
        reason = "not a release name (Words.Joined.By.Dots-GROUP, letters and digits)"
    elif source != "nfo" and not _plain_file_name(trimmed):
        reason = "not a plain file name"
    elif is_obfuscated(trimmed):
        reason = "obfuscated itself"
    if reason is None:
        return trimmed
    if len(refused) < SUMMARY_CANDIDATES:
        refused.append({"source": source, "name": name[:200], "refused": reason})
    return None


def _nfo_name(result: ReportedResult | None, refused: list[dict[str, str]]) -> str | None:
    """Rule 1: the first nfo release name that parses as a real release (a title and a kind)."""
    for candidate in result.release_names if result else ():
        name = _usable(candidate, "nfo", refused)
        if name is None:
            continue
        parsed = parse_release_name(name)
        if parsed.title and parsed.kind != "other":
            return name
        if len(refused) < SUMMARY_CANDIDATES:
            refused.append({"source": "nfo", "name": name[:200], "refused": "no title and kind"})
    return None


def _par2_name(result: ReportedResult | None, refused: list[dict[str, str]]) -> str | None:
    """Rule 2: the common stem of the par2 set's main files: the files grouped by
    their base (volume suffixes and one extension cut: `.part01.rar`, `.r00`,
    `.7z.001`, `.mkv`), extras (nfo, sfv, images) aside; the usable base with
    the most bytes wins (a refused one gives way to the next)."""
    totals: dict[str, int] = {}
    for item in result.files if result else ():
        base_name = _basename(item.name)
        if _extension(base_name) in EXTRA_EXTENSIONS or _extension(base_name) == "par2":
            continue
        base = stem_of(base_name)
        totals[base] = totals.get(base, 0) + (item.size or 0)
    for base in sorted(totals, key=lambda b: (totals[b], b), reverse=True):
        if (name := _usable(base, "par2", refused)) is not None:
            return name
    return None


def _archive_name(result: ReportedResult | None, refused: list[dict[str, str]]) -> str | None:
    """Rule 3: the stem of the archive's largest inner file, else its folder's name."""
    files = [f for f in result.files if f.name] if result else []
    if not files:
        return None
    largest = max(files, key=lambda f: (f.size or 0, f.name))
    parts = largest.name.replace("\\", "/").split("/")
    for candidate in (stem_of(parts[-1]), *reversed(parts[:-1])):
        name = _usable(candidate, "archive", refused)
        if name is not None:
            return name
    return None


def _kept_because(report: Report, refused: list[dict[str, str]]) -> str:
    reasons = []
    for role, what in (("nfo", "no nfo"), ("par2", "no par2 index"), ("archive", "no archive")):
        result = report.result(role)
        gone = next((m for m in report.missing if m.role == role), None)
        if gone is not None:
            reasons.append(f"the {role} could not be fetched ({gone.error[:80]})")
        elif result is None:
            reasons.append(f"{what} was read")
        elif result.errors:
            reasons.append(f"the {role} could not be read ({result.errors[0][1][:80]})")
        elif role == "archive" and result.headers_encrypted:
            reasons.append("the archive's headers are encrypted, so its file names are hidden")
        elif role == "nfo" and not result.release_names:
            reasons.append("the nfo names no release")
        elif not result.files and role != "nfo":
            reasons.append(f"the {role} names no files")
    if refused:
        reasons.append(
            "every name found was refused (" + f"{refused[0]['name']!r}: {refused[0]['refused']})"
        )
    return "; ".join(reasons) or "nothing named it"


def choose_name(report: Report) -> Choice:
    """The release's real name by the ordered rules (docs/inspection.md, "Which name wins").

    1. the nfo's release name, when it parses as a real release;
    2. the par2 FileDesc names' common stem of the main files;
    3. the archive's largest inner file's stem (or its folder);
    4. none: the release keeps its name, and `why` says why.
    A name that is itself obfuscated never wins.
    """
    refused: list[dict[str, str]] = []
    nfo = report.result("nfo")
    if (name := _nfo_name(nfo, refused)) is not None:
        return Choice(name, "nfo", f"Named by the nfo's release name {name!r}.", refused)
    par2 = report.result("par2")
    if (name := _par2_name(par2, refused)) is not None:
        count = len(par2.files) if par2 else 0
        return Choice(
            name,
            "par2",
            f"Named by the par2 index: the common stem of its largest files ({count} files).",
            refused,
        )
    archive = report.result("archive")
    if (name := _archive_name(archive, refused)) is not None:
        return Choice(
            name, "archive", f"Named by the archive's largest inner file: {name!r}.", refused
        )
    return Choice(None, "posted", _kept_because(report, refused), refused)


# --- matching files to their real names -------------------------------------------------


@dataclass(frozen=True, slots=True)
class CatalogFileSize:
    name: str
    file_index: int | None
    bytes: int
    segments: int


def _fits(real_size: int, item: CatalogFileSize) -> bool:
    """Whether a file of `real_size` bytes, yEnc-encoded, can be these articles' bytes."""
    return (
        real_size <= item.bytes <= real_size * YENC_OVERHEAD + item.segments * ARTICLE_HEADER_BYTES
    )


def _fits_any(sizes: Sequence[int], item: CatalogFileSize) -> bool:
    """Whether some real size of `sizes` (sorted) fits the file's bytes (`_fits`)."""
    lowest = (item.bytes - item.segments * ARTICLE_HEADER_BYTES) / YENC_OVERHEAD
    at = bisect_left(sizes, lowest)
    return at < len(sizes) and sizes[at] <= item.bytes


def match_files(report: Report, files: Sequence[CatalogFileSize]) -> tuple[dict[str, str], str]:
    """{posted file name: real name} from the par2 FileDescs, and a sentence on how.

    1. Size equality: a reported article's yEnc header names its file as
       posted and its real size; the one FileDesc of exactly that size names it.
    2. Then order: the FileDescs left, sorted by size (equal sizes by name, so
       `part01` before `part02`), against the release's files left but its
       par2 files, sorted by bytes (equal-sized FileDescs' files by their
       posting order, the subject's `[01/57]`); a file that fits no FileDesc
       (a par2 volume posted under a random name) is left out first. Taken
       only when there are as many of each and every pair fits: the real size
       at most the articles' bytes, which are at most YENC_OVERHEAD times it
       plus a header per segment.
    """
    par2 = report.result("par2")
    descs = [f for f in par2.files if f.size is not None] if par2 else []
    if not descs:
        return {}, "no par2 FileDescs to match the files with"
    by_name = {f.name: f for f in files}
    names: dict[str, str] = {}
    used: set[int] = set()
    for result in report.results:
        if result.role == "par2" or result.yenc_name is None or result.yenc_size is None:
            continue
        sized = [n for n, d in enumerate(descs) if d.size == result.yenc_size and n not in used]
        if len(sized) == 1 and result.yenc_name in by_name:
            used.add(sized[0])
            names[result.yenc_name] = descs[sized[0]].name
    exact = len(names)
    left = sorted(((d.size or 0, d.name) for n, d in enumerate(descs) if n not in used))
    par2_name = par2.yenc_name if par2 else None
    sizes = [size for size, _ in left]
    candidates = sorted(
        (
            f
            for f in files
            if f.name not in names
            and f.name != par2_name
            and _extension(f.name) != "par2"
            and _fits_any(sizes, f)  # an obfuscated par2 volume fits no FileDesc
        ),
        key=lambda f: (f.bytes, f.file_index if f.file_index is not None else 1 << 30, f.name),
    )
    how = f"{exact} by their yEnc size"
    if len(candidates) != len(left) or not left:
        return _real_only(names), how + (
            f"; not by order: {len(candidates)} files left for {len(left)} FileDescs"
            if left
            else ""
        )
    start = 0
    while start < len(left):  # equal sizes: the files of that slice in posting order
        end = start
        while end < len(left) and left[end][0] == left[start][0]:
            end += 1
        candidates[start:end] = sorted(
            candidates[start:end],
            key=lambda f: (f.file_index if f.file_index is not None else 1 << 30, f.name),
        )
        start = end
    pairs = list(zip(left, candidates, strict=True))
    if not all(_fits(size, item) for (size, _), item in pairs):
        return _real_only(names), how + "; not by order: the sizes do not fit"
    names.update((item.name, real) for (_, real), item in pairs)
    return _real_only(names), how + f", {len(pairs)} by size order"


def _real_only(names: dict[str, str]) -> dict[str, str]:
    """The mapping without the files already posted under their real name, and
    without a real name no downloader may be given (`_plain_file_name`)."""
    return {
        posted: real for posted, real in names.items() if posted != real and _plain_file_name(real)
    }


# Characters no Windows file name may hold (and markup's): a downloader there
# could not write the file as named.
_NOT_IN_FILE_NAMES = frozenset('<>:"|?*')


def _plain_file_name(name: str) -> bool:
    """A file name a downloader can write as it is, on any system: not empty, `.` or
    `..`, no path separator nor a character Windows refuses (`<>:"|?*`), no control
    or format character, and not holding the NZB meta's " => "."""
    return (
        name not in ("", ".", "..")
        and "/" not in name
        and "\\" not in name
        and _NOT_IN_FILE_NAMES.isdisjoint(name)
        and REAL_NAME_ARROW not in name
        and not has_control(name)
        and _hidden_character(name) is None
    )


# --- applying ------------------------------------------------------------------------


def _flags(report: Report) -> tuple[bool | None, bool | None]:
    """(passworded, encrypted): a password is needed to unpack (the archive says so,
    an entry is encrypted, or its headers are); its headers are encrypted.

    (None, None) when this report read no archive (none fetched, or its parser
    failed) and shows no password either: the flags found before stay, so a
    re-inspection of an archive that expired since never clears `passworded`
    (which would serve the release in default searches again)."""
    archive = report.result("archive")
    if archive is None:
        return None, None
    encrypted = bool(archive.headers_encrypted)
    passworded = encrypted or bool(archive.passworded) or any(f.encrypted for f in archive.files)
    if passworded or (archive.format is not None and not archive.errors):
        return passworded, encrypted
    return None, None


def _summary(
    report: Report, choice: Choice, why: str, matching: str, matched: int
) -> dict[str, Any]:
    """What the admin shows: bounded, whatever the report held."""
    return {
        "rule": choice.rule,
        "why": why,
        "refused": choice.refused,
        "matching": matching,
        "matched_files": matched,
        "results": [
            {
                "role": r.role,
                "format": r.format,
                "file_count": len(r.files),
                "files": [
                    {"name": f.name[:300], "size": f.size, "encrypted": f.encrypted}
                    for f in r.files[:SUMMARY_FILES]
                ],
                "files_truncated": r.files_truncated or len(r.files) > SUMMARY_FILES,
                "imdb_ids": list(r.imdb_ids),
                "tvdb_ids": list(r.tvdb_ids),
                "release_names": [n[:300] for n in r.release_names],
                "headers_encrypted": r.headers_encrypted,
                "passworded": r.passworded,
                "solid": r.solid,
                "volume": r.volume,
                "complete": r.complete,
                "notes": list(r.notes),
                "errors": [{"part": p, "error": e} for p, e in r.errors],
            }
            for r in report.results
        ],
        "missing": [
            {"role": m.role, "message_id": m.message_id, "error": m.error} for m in report.missing
        ],
    }


# field_params' list names -> the columns of apply_inspection.
_FIELD_COLUMNS = {
    "kinds": "kind",
    "title_keys": "title_key",
    "years": "year",
    "seasons": "seasons",
    "episodes": "episodes",
    "absolute_episodes": "absolute_episodes",
    "air_dates": "air_date",
    "full_seasons": "full_season",
    "resolutions": "resolution",
    "sources": "source",
    "codecs": "codec",
    "release_groups": "release_group",
    "propers": "proper",
    "repacks": "repack",
}


def apply_inspection(release_id: int, report: Report) -> Applied:
    """Apply a validated report to the release, inside the caller's transaction.

    The release row is locked first. Its name changes when a rule names it
    (`choose_name`); the name found before stays when none does. Its fields
    and category are read again from the name either way, with the current
    rule set, as the batch path reads a new release's.
    """
    row = queries.fetchone("lock_release_for_inspection", {"id": release_id})
    if row is None:
        raise NotFound(f"Release {release_id} does not exist.")
    choice = choose_name(report)
    name = choice.name or row.name
    why = choice.why
    if choice.name is not None and not is_obfuscated(row.posted_name or row.name):
        # A real posted name (INSPECT_RELEASES=all|other, "inspect again") is the
        # poster's word; a par2 or archive stem is no better.
        name = row.name
        why = (
            f"Kept its posted name, which is not obfuscated; the {choice.rule} "
            f"named {choice.name!r}."
        )
        choice = replace(choice, name=None, rule="posted", why=why)
    elif choice.name is None:
        kept = (
            "its posted name"
            if row.posted_name is None
            else f"the name found before ({row.name!r})"
        )
        why = f"Kept {kept}: {choice.why}."
    renamed = name != row.name
    files = [
        CatalogFileSize(f.name, f.file_index, int(f.bytes), int(f.segments))
        for f in queries.fetchall(
            "release_files_for_inspection", {"id": release_id, "limit": MAX_RELEASE_FILES}
        )
    ]
    real_names, matching = match_files(report, files)
    passworded, encrypted = _flags(report)
    nfo = report.result("nfo")
    rule_version = current_rules().version
    fields = read_name(name)
    category = decide_category(category_rules(rule_version), fields, name, row.groups)
    stored = field_params([fields])
    params = {column: stored[key][0] for key, column in _FIELD_COLUMNS.items()}
    params.update(
        id=release_id,
        name=name,
        renamed=renamed,
        fields_version=stored["fields_version"],
        category=category,
        rule_version=rule_version,
        passworded=passworded,
        encrypted=encrypted,
        imdb_id=nfo.imdb_ids[0] if nfo and nfo.imdb_ids else None,
        tvdb_id=nfo.tvdb_ids[0] if nfo and nfo.tvdb_ids else None,
        inspection=json.dumps(_summary(report, choice, why, matching, len(real_names))),
        real_names=json.dumps(real_names) if real_names else None,
    )
    done = queries.fetchone("apply_inspection", params)
    assert done is not None, "the release row is locked: it cannot have gone"
    return Applied(
        release_id=release_id,
        name=done.name,
        category=done.category,
        renamed=renamed,
        passworded=done.passworded,
        encrypted=done.encrypted,
        why=why,
        rule=choice.rule if choice.name is not None else "posted",
    )


# --- asking for a release to be inspected again -------------------------------------------

# (release ids, who asks: "admin:<username>", "manage.py reinspect") -> how many queued.
Requeue = Callable[[Sequence[int], str], int]
MAX_REINSPECT = 10_000  # releases per request (an admin selection, a command line)
_requeue: Requeue | None = None


def register_requeue(requeue: Requeue | None) -> None:
    """The function that queues inspection work for release ids (in the caller's
    transaction) and returns how many it queued: the `inspections` app registers it
    when it starts (None: none)."""
    global _requeue
    _requeue = requeue


def request_reinspection(release_ids: Sequence[int], actor: str) -> int:
    """Queue the releases for inspection again (their posted names are kept: a later
    inspection never loses them). NotFound names an id that is no release."""
    ids = sorted(set(release_ids))
    if not ids:
        raise Invalid("Name at least one release to inspect again.")
    if len(ids) > MAX_REINSPECT:
        raise Invalid(f"At most {MAX_REINSPECT:,} releases can be queued at once; name fewer.")
    if _requeue is None:
        raise Unavailable(
            "No inspection queue is installed in this coordinator (the inspections app "
            "registers it when it starts): nothing was queued."
        )
    found = {row.id for row in queries.fetchall("releases_by_ids", {"ids": ids})}
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise NotFound(f"No release has the id {shown}; nothing was queued.")
    return _requeue(ids, actor)
