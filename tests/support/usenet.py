"""Generate realistic-looking Usenet binary posts for tests against a real news server.

A seed node only ever sees overview lines (subject, poster, date, message-id, bytes), so
the articles copy what matters there: yEnc subjects of multi-part RAR/PAR2 sets, posters,
spread-out backdated dates and some incomplete files. Bodies stay a few bytes so thousands
of articles post in seconds. The manifest says what was posted, so an end-to-end test can
compare the catalog it built against the truth.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

POSTERS = (
    "Yenc Poster <yenc@poster.invalid>",
    "Anonymous <nobody@example.invalid>",
    "PowerPost <powerpost@pp.invalid>",
    "Nyuu <nyuu@upload.invalid>",
    "camelsystem <camel@cs.invalid>",
    "ngPost <ngpost@ng.invalid>",
)
WORDS = (
    "alpha", "borealis", "cascade", "delta", "ember", "fjord", "granite", "harbor",
    "iris", "juniper", "kestrel", "lagoon", "meridian", "nebula", "orchid", "prairie",
    "quartz", "raven", "sierra", "tundra", "umber", "vertex", "willow", "zenith",
)  # fmt: skip
CHATTER = (
    "Any repost of the missing parts?",
    "Thanks for the upload",
    "Request: older issues",
    "Completion report for last week",
    "Which indexer do you use?",
)
# A yEnc line for a real post is 128 characters; the declared sizes make subjects and
# =ybegin lines look real while the body carries only a few bytes.
YENC_LINE = 128
PART_SIZE = 716_800


@dataclass(frozen=True)
class Article:
    """One article as it goes on the wire; Newsgroups is kept apart so it can be retargeted."""

    message_id: str
    date: datetime
    newsgroups: tuple[str, ...]
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def with_newsgroups(self, groups: Sequence[str]) -> Article:
        return replace(self, newsgroups=tuple(groups))

    def to_wire(self) -> bytes:
        """The article with CRLF line ends and dot-stuffing, without the final ".\r\n"."""
        lines = [f"Path: {_path_host(self)}!not-for-mail"]
        lines.append(f"Newsgroups: {','.join(self.newsgroups)}")
        lines.extend(f"{name}: {value}" for name, value in self.headers)
        lines.append(f"Message-ID: {self.message_id}")
        lines.append(f"Date: {format_datetime(self.date)}")
        head = "\r\n".join(lines).encode("utf-8") + b"\r\n\r\n"
        body = self.body.replace(b"\r\n", b"\n").split(b"\n")
        if body and body[-1] == b"":
            body.pop()
        stuffed = b"".join(
            (b"." + line if line.startswith(b".") else line) + b"\r\n" for line in body
        )
        return head + stuffed

    @property
    def subject(self) -> str:
        return dict(self.headers)["Subject"]


def _path_host(article: Article) -> str:
    # The poster's domain as the injecting host: Path must not name the server itself.
    return article.message_id.rsplit("@", 1)[-1].rstrip(">")


@dataclass(frozen=True)
class Segment:
    part: int
    message_id: str
    bytes: int  # declared size of this yEnc part, as a real post would carry
    date: datetime


@dataclass
class PostedFile:
    """One file of a release: which of its parts were posted and which are missing."""

    release: str
    filename: str
    file_index: int
    file_count: int
    poster: str
    newsgroups: tuple[str, ...]
    total_parts: int
    segments: list[Segment] = field(default_factory=list)
    missing_parts: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing_parts

    @property
    def size(self) -> int:
        return sum(segment.bytes for segment in self.segments) + len(self.missing_parts) * PART_SIZE


@dataclass
class Manifest:
    """What make_binary_posts produced: files by name, and the plain text posts."""

    files: dict[str, PostedFile] = field(default_factory=dict)
    text_posts: list[str] = field(default_factory=list)  # message-ids

    @property
    def message_ids(self) -> list[str]:
        ids = [s.message_id for f in self.files.values() for s in f.segments]
        return ids + self.text_posts

    def retarget(self, groups: Sequence[str]) -> None:
        for posted in self.files.values():
            posted.newsgroups = tuple(groups)


def make_binary_posts(
    groups: str | Sequence[str] = "alt.binaries.test",
    *,
    seed: int = 1,
    releases: int = 40,
    days: int = 30,
    now: datetime | None = None,
    max_rar_parts: int = 8,
    max_segments: int = 12,
    incomplete_share: float = 0.15,
    text_posts: int = 50,
) -> tuple[list[Article], Manifest]:
    """Return articles sorted by Date (the order a server numbers them in) and a manifest.

    Each release is a set of files named like a real upload (`name.part01.rar`,
    `name.vol00+01.par2`, `name.nfo`) posted by one poster within a few minutes at a
    random moment between `days` ago and an hour ago. About `incomplete_share` of the
    files lose some segments. Everything depends only on the arguments.
    """
    rng = random.Random(seed)
    group_list = (groups,) if isinstance(groups, str) else tuple(groups)
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    oldest = now - timedelta(days=days)
    span = (now - timedelta(hours=1) - oldest).total_seconds()
    manifest = Manifest()
    articles: list[Article] = []

    for release_no in range(releases):
        name = f"{rng.choice(WORDS)}.{rng.choice(WORDS)}.{seed}x{release_no:03d}"
        poster = rng.choice(POSTERS)
        group = rng.choice(group_list)
        domain = poster.split("@", 1)[1].rstrip(">")
        moment = oldest + timedelta(seconds=rng.randrange(int(span)))
        filenames = _release_files(rng, name, max_rar_parts)
        for index, filename in enumerate(filenames, start=1):
            total = _segment_count(rng, filename, max_segments)
            posted = PostedFile(
                release=name,
                filename=filename,
                file_index=index,
                file_count=len(filenames),
                poster=poster,
                newsgroups=(group,),
                total_parts=total,
            )
            missing = set()
            if total > 1 and rng.random() < incomplete_share:
                missing = set(rng.sample(range(1, total + 1), rng.randint(1, max(1, total // 3))))
            for part in range(1, total + 1):
                # Whole seconds: a Date header carries no more, and the manifest must
                # compare equal to what OVER reports.
                moment += timedelta(seconds=rng.randint(1, 3))
                if part in missing:
                    posted.missing_parts.append(part)
                    continue
                size = PART_SIZE if part < total else rng.randint(1_000, PART_SIZE)
                message_id = f"<part{part}of{total}.{rng.getrandbits(64):016x}@{domain}>"
                subject = (
                    f'[{index:0{len(str(len(filenames)))}d}/{len(filenames)}] - "{filename}" '
                    f"yEnc ({part}/{total})"
                )
                articles.append(
                    Article(
                        message_id=message_id,
                        date=moment,
                        newsgroups=(group,),
                        headers=(
                            ("From", poster),
                            ("Subject", subject),
                            ("Organization", "generated for tests"),
                            ("X-Newsposter", "tests.support.usenet"),
                        ),
                        body=_yenc_body(rng, filename, part, total, size),
                    )
                )
                posted.segments.append(Segment(part, message_id, size, moment))
            manifest.files[filename] = posted

    for number in range(text_posts):
        moment = oldest + timedelta(seconds=rng.randrange(int(span)))
        message_id = f"<chat.{seed}.{number}.{rng.getrandbits(48):012x}@readers.invalid>"
        articles.append(
            Article(
                message_id=message_id,
                date=moment,
                newsgroups=(rng.choice(group_list),),
                headers=(
                    ("From", f"Reader {number} <reader{number}@readers.invalid>"),
                    ("Subject", rng.choice(CHATTER)),
                ),
                body=b"Just text, no binaries here.\n",
            )
        )
        manifest.text_posts.append(message_id)

    articles.sort(key=lambda article: article.date)
    return articles, manifest


def retarget(articles: Iterable[Article], groups: Sequence[str]) -> list[Article]:
    """Copies of `articles` posted to `groups` instead."""
    return [article.with_newsgroups(groups) for article in articles]


def _release_files(rng: random.Random, name: str, max_rar_parts: int) -> list[str]:
    rar_parts = rng.randint(1, max_rar_parts)
    width = max(2, len(str(rar_parts)))
    files = [f"{name}.part{n:0{width}d}.rar" for n in range(1, rar_parts + 1)]
    files.append(f"{name}.par2")
    # Recovery volumes double in size: vol00+01, vol01+02, vol03+04, ...
    start, blocks = 0, 1
    for _ in range(rng.randint(1, 3)):
        files.append(f"{name}.vol{start:02d}+{blocks:02d}.par2")
        start, blocks = start + blocks, blocks * 2
    if rng.random() < 0.6:
        files.append(f"{name}.nfo")
    return files


def _segment_count(rng: random.Random, filename: str, max_segments: int) -> int:
    if filename.endswith(".nfo"):
        return 1
    if filename.endswith(".par2"):
        return rng.randint(1, 3)
    return rng.randint(max(1, max_segments // 3), max_segments)


def _yenc_body(rng: random.Random, filename: str, part: int, total: int, size: int) -> bytes:
    """A yEnc part whose headers declare `size` bytes but whose data is a few bytes long."""
    data = rng.randbytes(rng.randint(4, 24))
    begin = (part - 1) * PART_SIZE + 1
    lines = [
        f"=ybegin part={part} total={total} line={YENC_LINE} size={size * total} name={filename}",
        f"=ypart begin={begin} end={begin + size - 1}",
    ]
    encoded = yenc_encode(data)
    return (
        "\n".join(lines).encode()
        + b"\n"
        + encoded
        + b"\n"
        + f"=yend size={len(data)} part={part} pcrc32={zlib.crc32(data):08x}\n".encode()
    )


def yenc_encode(data: bytes) -> bytes:
    """yEnc-encode one line of data (critical characters escaped, as the spec asks)."""
    out = bytearray()
    for byte in data:
        value = (byte + 42) % 256
        if value in (0x00, 0x0A, 0x0D, 0x3D) or (not out and value in (0x09, 0x20, 0x2E)):
            out += bytes((0x3D, (value + 64) % 256))
        else:
            out.append(value)
    return bytes(out)


def yenc_body(
    data: bytes,
    name: str = "file.bin",
    *,
    part: tuple[int, int, int] | None = None,  # (part, begin, file size)
    total: int | None = None,  # the file's number of parts, written in =ybegin when given
    line_end: bytes = b"\r\n",
) -> bytes:
    """A real article body as posters write it: =ybegin [=ypart] data lines =yend.

    Dot-stuffing is not done here (Article.to_wire does it). The data is encoded
    by SABnzbd's sabctools, 128 characters a line, with every critical character
    escaped, so downloaders decode it to `data`.
    """
    # Imported here: the INN harness imports this module under the system's Python,
    # as `nobody`, where only the standard library is (tests/inn/test_inn_harness.py).
    import sabctools

    encoded, crc = sabctools.yenc_encode(data)
    assert crc == zlib.crc32(data)
    encoded = encoded.replace(b"\r\n", line_end)
    if part is None:
        head = b"=ybegin line=128 size=%d name=%s%s" % (len(data), name.encode(), line_end)
        tail = b"=yend size=%d crc32=%08x%s" % (len(data), crc, line_end)
    else:
        number, begin, size = part
        parts = b"" if total is None else b" total=%d" % total
        head = b"=ybegin part=%d%s line=128 size=%d name=%s%s=ypart begin=%d end=%d%s" % (
            number, parts, size, name.encode(), line_end, begin, begin + len(data) - 1, line_end,
        )  # fmt: skip
        tail = b"=yend size=%d part=%d pcrc32=%08x%s" % (len(data), number, crc, line_end)
    return head + encoded + line_end + tail
