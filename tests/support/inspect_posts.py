"""A small obfuscated release as yEnc articles, for the inspecting agent's tests and bench.

Real files: a video-like file of random bytes, a par2 index of it made by
par2cmdline, an nfo with an IMDb link and the release name, and a stored zip
of the video (its first article shows the name inside). Each is posted under
a random file name and split into yEnc articles of ``part_size`` bytes.
``lease_articles`` names them as an inspection lease does.
"""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.usenet import Article, yenc_body

REAL_NAME = "Quiet.Harbor.2019.1080p.BluRay.x264-GRP"
IMDB = "tt0111161"


@dataclass
class PostedFile:
    role: str
    name: str  # the obfuscated name it is posted under
    data: bytes
    articles: list[Article] = field(default_factory=list)

    @property
    def message_ids(self) -> list[str]:
        return [article.message_id for article in self.articles]


def yenc_articles(
    data: bytes, name: str, group: str, part_size: int, rng: random.Random
) -> list[Article]:
    """``data`` as yEnc articles of ``part_size`` bytes, under a random subject."""
    chunks = [data[at : at + part_size] for at in range(0, len(data), part_size)] or [b""]
    stem = f"{rng.getrandbits(48):012x}"
    articles = []
    for number, chunk in enumerate(chunks, start=1):
        begin = (number - 1) * part_size + 1
        body = yenc_body(chunk, name, part=(number, begin, len(data)), total=len(chunks))
        subject = f'{stem} [1/3] - "{name}" yEnc ({number}/{len(chunks)})'
        articles.append(
            Article(
                message_id=f"<{uuid.UUID(int=rng.getrandbits(128)).hex}@inspect.test>",
                date=datetime.now(UTC),
                newsgroups=(group,),
                headers=(("From", "poster <p@poster.invalid>"), ("Subject", subject)),
                body=body,
            )
        )
    return articles


def obfuscated_release(
    group: str, *, seed: int = 1, video_bytes: int = 60_000, part_size: int = 20_000
) -> dict[str, PostedFile]:
    """The release's files by role ("par2", "nfo", "archive"), posted obfuscated."""
    rng = random.Random(seed)
    video = rng.randbytes(video_bytes)
    video_name = f"{REAL_NAME}.mkv"
    nfo = (
        f"{REAL_NAME}\r\n\r\nA film.\r\nhttps://www.imdb.com/title/{IMDB}/\r\n" + "-" * 70 + "\r\n"
    ) * 40  # about 5 KB: several articles at a small part size
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory)
        (path / video_name).write_bytes(video)
        par2 = shutil.which("par2")
        if par2 is None:
            raise RuntimeError("par2 is not installed: run `sudo .ci/install-archivers`")
        subprocess.run(
            [par2, "create", "-q", "-q", "-s4096", "-r5", "-n1", "index.par2", video_name],
            cwd=path,
            check=True,
            capture_output=True,
        )
        index = (path / "index.par2").read_bytes()
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(video_name, video)
    stem = f"{rng.getrandbits(40):010x}"
    files = {
        "par2": PostedFile("par2", f"{stem}.par2", index),
        "nfo": PostedFile("nfo", f"{stem}.nfo", nfo.encode("ascii")),
        "archive": PostedFile("archive", f"{stem}.zip", packed.getvalue()),
    }
    nfo_part = max(1, part_size // 10)  # so the nfo spans several articles
    for posted in files.values():
        size = nfo_part if posted.role == "nfo" else part_size
        posted.articles = yenc_articles(posted.data, posted.name, group, size, rng)
    return files


def lease_articles(files: dict[str, PostedFile]) -> list[dict[str, Any]]:
    """The lease's ``articles``: par2 and archive by their first article, the nfo whole."""
    named = []
    for role, posted in files.items():
        articles = posted.articles if role == "nfo" else posted.articles[:1]
        named.append(
            {
                "role": role,
                "message_ids": [article.message_id for article in articles],
                "bytes": sum(len(article.body) for article in articles),
                "name": posted.name,
            }
        )
    return named


def catalog_reports(
    files: dict[str, PostedFile], poster: str = "poster <p@poster.invalid>"
) -> list:
    """The posted files as a node's batch reports them (catalog FileReports): the same
    message-ids, so that the coordinator plans inspections of exactly these articles."""
    from catalog.validation import FileReport
    from tests.support.reports import subject

    reports = []
    for index, posted in enumerate(files.values(), start=1):
        total = len(posted.articles)
        reports.append(
            FileReport(
                subject=subject(posted.name, total, 1, index, len(files)),
                poster=poster,
                date=1_700_000_000 + index,
                total=total,
                segments=[
                    (part, 1000 * index + part, article.message_id, len(article.body) + 600)
                    for part, article in enumerate(posted.articles, start=1)
                ],
            )
        )
    return reports
