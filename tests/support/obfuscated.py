"""Real obfuscated releases, made as uploaders make them, for the inspection tests (issue 26).

Each release starts as real files on disk in a temporary directory: random
bytes under a real `.mkv` name, packed by 7-Zip (in volumes, or one archive
encrypted with `-p -mhe=on`) or kept as they are, with a par2 set made by
par2cmdline over them (its FileDesc packets carry the real names) and an nfo
with an IMDb link. Then the files are posted as an obfuscating uploader posts
them: every file renamed to a random stem shared by the release
(`9f8e7d6c5b4a39281706.7z.001`), under a random subject prefix
(`a8f7d6e5c4b3 [01/06] - "9f8e...7z.001" yEnc (1/3)`), in yEnc parts of
SEGMENT_BYTES, so every file of some size has several segments.

The six releases: a movie (7z volumes, par2, nfo), a TV episode (the file
itself and par2, no nfo), a passworded one (a 7z with encrypted headers, and
par2), a bare one (7z volumes only: nothing names it, so it keeps its posted
name), a zipped one (zip volumes only: the first one's local header names
it) and a control posted under its real name. `Release` says what each
should become once inspected, and `PostedFile` what bytes a downloader must
get back.

par2 and 7-Zip come from `.ci/install-archivers`; a missing one fails the
test that needs it with that sentence rather than skipping it.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.usenet import Article, yenc_body

SEGMENT_BYTES = 64_000
POSTER = "Obfuscated Uploader <up@obfuscated.invalid>"
IMDB_ID = "tt0111161"
# newznab categories, as usenet/categories.py gives them for these names.
MOVIES_HD = 2040
TV_HD = 5040
OTHER_MISC = 8010


def tool(*names: str) -> str:
    """The path of the first of `names` installed; the test fails (never skips) without one."""
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(f"{names[0]} is not installed: run `sudo .ci/install-archivers`")


@dataclass(frozen=True)
class PostedFile:
    real_name: str  # its name on the uploader's disk, as the par2 set records it
    posted_name: str  # the random name in its subject and =ybegin lines
    data: bytes
    message_ids: tuple[str, ...]  # its segments, in order


@dataclass(frozen=True)
class Release:
    kind: str  # movie, episode, passworded, bare, zipped, control
    real_name: str  # the name it was made under
    posted_name: str  # the stem of its posted file names: the catalog's name before inspection
    named_inside: bool  # whether par2 or archive names it (else it keeps its posted name)
    category: int  # the newznab category of the name it should end with
    files: tuple[PostedFile, ...]
    password: str | None = None
    imdb_id: str | None = None

    @property
    def expected_name(self) -> str:
        return self.real_name if self.named_inside else self.posted_name

    @property
    def obfuscated(self) -> bool:
        return self.posted_name != self.real_name


def make_posts(
    workdir: Path, group: str, *, seed: int = 26, now: datetime | None = None
) -> tuple[list[Article], list[Release]]:
    """Make the six releases under `workdir` and their articles for `group`, oldest first."""
    rng = random.Random(seed)
    now = (now or datetime.now(UTC)).replace(microsecond=0)
    maker = _Maker(rng, workdir, group, now - timedelta(hours=3))
    releases = [
        maker.movie("The.Shawshank.Redemption.1994.1080p.BluRay.x264-E2EGRP"),
        maker.episode("Northern.Exposure.S02E05.720p.HDTV.x264-E2EGRP"),
        maker.passworded("Secret.Garden.Heist.2021.1080p.WEB-DL.x264-E2EGRP"),
        maker.bare("Hidden.Valley.2018.1080p.BluRay.x264-E2EGRP"),
        maker.zipped("Lost.Canyon.2017.720p.BluRay.x264-E2EGRP"),
        maker.control("Quiet.Harbor.S01E01.1080p.WEB.h264-E2EGRP"),
    ]
    return maker.articles, releases


class _Maker:
    def __init__(self, rng: random.Random, workdir: Path, group: str, start: datetime) -> None:
        self.rng = rng
        self.workdir = workdir
        self.group = group
        self.moment = start
        self.articles: list[Article] = []

    # --- the releases --------------------------------------------------------

    def movie(self, name: str) -> Release:
        """7z volumes of an .mkv, par2 over the volumes, an nfo with the name and IMDb link."""
        folder = self._folder("movie")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(420_000))
        volumes = self._seven_zip(folder, f"{name}.7z", [f"{name}.mkv"], "-v160k")
        par2 = self._par2(folder, name, volumes)
        (folder / f"{name}.nfo").write_bytes(_nfo(name, IMDB_ID))
        stem = self._stem()
        files = self._post(folder, [*volumes, f"{name}.nfo", *par2], name, stem)
        return Release("movie", name, stem, True, MOVIES_HD, files, imdb_id=IMDB_ID)

    def episode(self, name: str) -> Release:
        """The .mkv itself, posted with no extension, and par2 over it; no nfo."""
        folder = self._folder("episode")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(300_000))
        par2 = self._par2(folder, name, [f"{name}.mkv"])
        stem = self._stem()
        # Posted as the bare stem: an extension the catalog does not strip would
        # make the file a release of its own.
        files = self._post(folder, [f"{name}.mkv", *par2], name, stem, {f"{name}.mkv": stem})
        return Release("episode", name, stem, True, TV_HD, files)

    def passworded(self, name: str) -> Release:
        """One 7z with a password and encrypted headers, small enough for one article; par2."""
        folder = self._folder("passworded")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(40_000))
        password = f"pw{self.rng.getrandbits(48):012x}"
        archive = self._seven_zip(folder, f"{name}.7z", [f"{name}.mkv"], f"-p{password}", "-mhe=on")
        par2 = self._par2(folder, name, archive)
        stem = self._stem()
        files = self._post(folder, [*archive, *par2], name, stem)
        assert len(files[0].message_ids) == 1, "the encrypted archive must end in its first article"
        return Release("passworded", name, stem, True, MOVIES_HD, files, password=password)

    def bare(self, name: str) -> Release:
        """7z volumes and nothing else: the names are in the last volume, which nobody reads."""
        folder = self._folder("bare")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(260_000))
        volumes = self._seven_zip(folder, f"{name}.7z", [f"{name}.mkv"], "-v100k")
        stem = self._stem()
        files = self._post(folder, volumes, name, stem)
        return Release("bare", name, stem, False, OTHER_MISC, files)

    def zipped(self, name: str) -> Release:
        """Zip volumes and nothing else: the first volume's local header names the .mkv."""
        folder = self._folder("zipped")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(200_000))
        volumes = self._seven_zip(folder, f"{name}.zip", [f"{name}.mkv"], "-tzip", "-v100k")
        stem = self._stem()
        files = self._post(folder, volumes, name, stem)
        return Release("zipped", name, stem, True, MOVIES_HD, files)

    def control(self, name: str) -> Release:
        """A release posted under its real name: 7z volumes, par2, nfo."""
        folder = self._folder("control")
        (folder / f"{name}.mkv").write_bytes(self.rng.randbytes(200_000))
        volumes = self._seven_zip(folder, f"{name}.7z", [f"{name}.mkv"], "-v120k")
        par2 = self._par2(folder, name, volumes)
        (folder / f"{name}.nfo").write_bytes(_nfo(name, None))
        files = self._post(folder, [*volumes, f"{name}.nfo", *par2], name, name, prefix=name)
        return Release("control", name, name, True, TV_HD, files)

    # --- the tools -----------------------------------------------------------

    def _folder(self, kind: str) -> Path:
        folder = self.workdir / kind
        folder.mkdir(parents=True)
        return folder

    def _stem(self) -> str:
        # 20 hexadecimal characters: hash-like, as obfuscating uploaders name files.
        return f"{self.rng.getrandbits(80):020x}"

    @staticmethod
    def _seven_zip(folder: Path, archive: str, inputs: list[str], *options: str) -> list[str]:
        """Store `inputs` in `archive` (volumes `archive.001`... with -v); the names made."""
        subprocess.run(
            [tool("7zz", "7z"), "a", "-bd", "-y", "-mx0", *options, archive, *inputs],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        made = sorted(path.name for path in folder.glob(f"{archive}*"))
        assert made, f"7-Zip made no {archive}"
        return made

    @staticmethod
    def _par2(folder: Path, name: str, inputs: list[str]) -> list[str]:
        """A par2 index and one recovery volume over `inputs`; the index first."""
        subprocess.run(
            [tool("par2"), "create", "-q", "-q", "-s16384", "-r10", "-n1", f"{name}.par2", *inputs],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        volumes = sorted(path.name for path in folder.glob(f"{name}.vol*.par2"))
        assert volumes, f"par2 made no recovery volume for {name}"
        return [f"{name}.par2", *volumes]

    def _post(
        self,
        folder: Path,
        names: list[str],
        real: str,
        stem: str,
        renames: dict[str, str] | None = None,
        *,
        prefix: str | None = None,
    ) -> tuple[PostedFile, ...]:
        """Articles for the files `names` (in that order) under posted names with `stem`."""
        prefix = prefix or f"{self.rng.getrandbits(48):012x}"
        files = []
        for index, name in enumerate(names, start=1):
            data = (folder / name).read_bytes()
            posted = (renames or {}).get(name) or stem + name[len(real) :]
            chunks = [data[at : at + SEGMENT_BYTES] for at in range(0, len(data), SEGMENT_BYTES)]
            message_ids = []
            for part, chunk in enumerate(chunks, start=1):
                self.moment += timedelta(seconds=1)
                message_id = f"<{self.rng.getrandbits(96):024x}@obfuscated.invalid>"
                subject = (
                    f'{prefix} [{index:02d}/{len(names):02d}] - "{posted}" '
                    f"yEnc ({part}/{len(chunks)})"
                )
                begin = (part - 1) * SEGMENT_BYTES + 1
                body = yenc_body(chunk, posted, part=(part, begin, len(data)), total=len(chunks))
                self.articles.append(
                    Article(
                        message_id=message_id,
                        date=self.moment,
                        newsgroups=(self.group,),
                        headers=(("From", POSTER), ("Subject", subject)),
                        body=body,
                    )
                )
                message_ids.append(message_id)
            files.append(PostedFile(name, posted, data, tuple(message_ids)))
        return tuple(files)


def _nfo(name: str, imdb_id: str | None) -> bytes:
    """An nfo as groups write them: a box of cp437 art, the release name, the IMDb link."""
    lines = [
        "\u2554" + "\u2550" * 62 + "\u2557",
        f"\u2551  {name:<60}\u2551",
        "\u255a" + "\u2550" * 62 + "\u255d",
        "",
        f"  Release ......: {name}",
        "  Source .......: BluRay",
    ]
    if imdb_id:
        lines.append(f"  IMDb .........: https://www.imdb.com/title/{imdb_id}/")
    lines += ["", "  Greetings to all the groups who keep the scene alive.", ""]
    return "\r\n".join(lines).encode("cp437")
