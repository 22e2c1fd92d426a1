"""Build tests/usenet/data/release_names_holdout.json: real names the parser was not tuned on.

The held-out corpus (issue 25: "the acceptance of this issue uses other real
names as well"). release_names.json holds Sonarr's and Radarr's fixture
names, and usenet/release_names.py was tuned on them; this file holds names
from other public parsers' tests, with what those parsers read from them, so
bench/bench_names.py and tests/usenet/test_release_holdout.py measure how
well the parser's rules generalise. Rows have the same format as
release_names.json (see its "about") and are scored by the same module
(tests/support/name_corpus.py).

Sources (each repository's commit is written in the data file):

- guessit (github:guessit-io/guessit): guessit/test/episodes.yml and
  movies.yml, each entry a name with guessit's expected properties (type,
  title, season, episode, date, year, screen_size, source, other).
- parse-torrent-name (github:divijbindlish/parse-torrent-name):
  tests/files/input.json with the expected output.json beside it (title,
  season, episode, year, resolution, quality).

Run it on a checkout or bare git directory of each (PyYAML reads guessit's
files; it is not a dependency of the project, only of this script):

    python bench/corpus/extract_holdout.py --guessit PATH --ptn PATH [--out FILE]

Only names and expected values are written; none of the fetched code.

What is kept. A name a newznab server could carry as a release: an entry
that is a path keeps its last component only when that component states
everything the row expects (the title's letters and each expected number):
guessit reads "Season 2/Show - 05.avi" with the folder's help, a release
name has no folder. Left out, counted by reason under "dropped": subtitle
files, samples, guessit's negative tests ("-name" keys and "-field"
expectations), entries guessit reads only with a hint (options that give
the type, the title or prefer an episode number: a server has no hint), and
parse-torrent-name entries stating neither numbering nor year (nothing
says whether they are TV or a movie).

What a row states, from the source's expectations:

- kind: guessit's type (episode: tv, movie: movie); for parse-torrent-name,
  tv where it states a season or an episode or the name has a TV mark
  (extract._tv_marker: a daily date, SxxEyy...; PTN reads no dates), else
  movie (it states a year).
  Neither source states anime, so a bracket-opening TV name (the fansub
  convention) also accepts 5070, as in release_names.json.
- season: the first season; several seasons or a season with no episode is
  a pack (full_season, multi_season). episodes: with a season, the episode
  numbers. An episode without a season (guessit does not say whether "Show
  - 13" is episode 13 of a season or absolute number 13) is
  episodes_or_absolute: right if either list equals it.
- air_date: guessit's date on an episode. year: the year stated.
- resolution: screen_size / resolution by class (2160, 1080, 720, "sd"
  below 720); "1444x866" is its height's class.
- category: the CATEGORY_RULE of bench/corpus/extract.py, from the quality
  the row's resolution and source make (quality: the Sonarr/Radarr quality
  name it maps to, so extract.category gives the id). A category is stated
  only where the quality is: a resolution stated, or a source that is SD
  whatever the name says (DVD, VHS, analog or digital TV, a camera, a
  telesync or telecine: 2030 for a movie). Beyond that rule, two ids the
  sources state and the rule's tools do not: a 3D movie expects 2060 and a
  TV documentary 5080 (category_from_fields files them so). A 1080p or
  2160p BluRay movie the source does not call a rip, re-encode or remux also
  accepts 2050: the name may be a whole disc (Radarr reads "2160p UHD
  Blu-ray ... HEVC" as BR-DISK, which release_names.json files under 2050).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE.parents[1] / "tests" / "usenet" / "data" / "release_names_holdout.json"


def _extract() -> Any:
    """bench/corpus/extract.py (its category rule, git reading and dump)."""
    spec = importlib.util.spec_from_file_location("corpus_extract", HERE / "extract.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


extract = _extract()

GUESSIT_FILES = ("guessit/test/episodes.yml", "guessit/test/movies.yml")
PTN_INPUT, PTN_OUTPUT = "tests/files/input.json", "tests/files/output.json"

# guessit options that tell it what the name alone does not.
HINTS = ("-t", "--type", "-T", "--expected-title", "-E", "--episode-prefer-number")
SUBTITLE_EXTENSIONS = (".srt", ".sub", ".idx", ".ass", ".ssa", ".vtt")
# Sources whose quality is SD whatever the name says, and the camera copies among them.
SD_SOURCES = frozenset(
    ("dvd", "vhs", "tv", "digital tv", "satellite", "dvdrip", "dvdscr", "pdtv", "sdtv")
)
CAMERA_SOURCES = frozenset(
    "camera|hd camera|telesync|hd telesync|telecine|hd telecine|cam|camrip|hdcam|ts|hdts".split("|")
)
QUALITY_NUMBERS = frozenset((264, 265, 480, 576, 720, 1080, 2160))
BLURAY_SOURCES = frozenset(("blu-ray", "ultra hd blu-ray", "bluray", "brrip", "bdrip"))


def resolution_class(text: str) -> int | str | None:
    """The class of a stated resolution ("720p", "1080i", "1444x866", "4K"); None: unread."""
    low = str(text).lower().strip()
    if low in ("4k", "uhd"):
        return 2160
    height = low.split("x")[-1].rstrip("pi")
    if not height or not all(c in "0123456789" for c in height):
        return None
    lines = int(height)
    if lines >= 2160:
        return 2160
    if lines >= 1080:
        return 1080
    if lines >= 720:
        return 720
    return "sd"


def quality(resolution: int | str | None, source: str, remux: bool) -> str | None:
    """The Sonarr/Radarr quality (extract.QUALITIES) a resolution class and source make."""
    source = source.lower()
    if source in CAMERA_SOURCES:
        return "CAM"
    if resolution is None:
        return "SDTV" if source in SD_SOURCES else None
    if remux and resolution in (1080, 2160):
        return f"Remux{resolution}p"
    return {"sd": "SDTV", 720: "HDTV720p", 1080: "HDTV1080p", 2160: "HDTV2160p"}[resolution]


def _fold(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def _digit_runs(text: str) -> list[str]:
    runs, current = [], ""
    for c in text:
        if c in "0123456789":
            current += c
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def states_all(name: str, row: dict[str, Any]) -> bool:
    """Whether `name` itself holds the row's title letters and each number it expects."""
    if "title" in row and _fold(row["title"]) not in _fold(name):
        return False
    # A codec's or a resolution's digits (x264, 720p) state no season or episode.
    runs = [run for run in _digit_runs(name) if int(run) not in QUALITY_NUMBERS]
    numbers = [row.get("season"), row.get("year"), *row.get("episodes", ())]
    numbers += row.get("episodes_or_absolute", [])
    if "air_date" in row:
        numbers.append(int(row["air_date"][:4]))
    return all(any(str(n) in run for run in runs) for n in numbers if n is not None)


def _opens_with_a_tag(name: str) -> bool:
    return name.lstrip().startswith(("[", "\u3010"))


def _listed(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _category(
    row: dict[str, Any], quality_name: str | None, others: list[str], fansub: bool
) -> None:
    """Set category (and category_also) on the row by the documented rule."""
    kind = row["kind"]
    expected = extract.category(kind, quality_name)
    if expected is None:
        return
    if kind == "movie" and "3D" in others and expected != 2050:
        expected = 2060
    if kind == "tv" and "Documentary" in others:
        expected = 5080
    row["category"] = expected
    also = []
    if kind == "tv" and fansub:
        also.append(5070)
    if (
        kind == "movie"
        and expected in (2040, 2045)
        and row.get("resolution") in (1080, 2160)
        and row.get("video_source", "").lower() in BLURAY_SOURCES
        and not {"Rip", "Reencoded"} & set(others)
    ):
        also.append(2050)
    if also:
        row["category_also"] = also


def _numbering(row: dict[str, Any], seasons: list[int], episodes: list[int]) -> None:
    if seasons:
        row["season"] = seasons[0]
        if episodes:
            row["episodes"] = sorted(episodes)
        else:
            row["full_season"] = True
            if len(seasons) > 1:
                row["multi_season"] = True
    elif episodes:
        row["episodes_or_absolute"] = sorted(episodes)


def guessit_rows(text: str, source: int, dropped: Counter[str], label: str) -> list[dict[str, Any]]:
    import yaml  # only this script needs PyYAML

    entries = yaml.safe_load(text)
    default = entries.pop("__default__", None) or {}
    rows = []
    for key, expected in entries.items():
        expected = {**default, **(expected or {})}
        name = str(key)
        why = None
        options = str(expected.get("options", ""))
        if name.startswith(("-", "+")) or any(k.startswith("-") for k in expected):
            why = "a negative test: it states what the name does NOT parse to"
        elif any(opt in options.split() for opt in HINTS):
            why = "read so only with a hint (an option giving the type, title or numbering)"
        elif expected.get("type") not in ("episode", "movie"):
            why = "neither an episode nor a movie"
        elif name.lower().endswith(SUBTITLE_EXTENSIONS):
            why = "a subtitle file's name, not a release name"
        elif "Sample" in _listed(expected.get("other")):
            why = "a sample file, not a release"
        if why:
            dropped[f"{label}: {why}"] += 1
            continue
        others = [str(o) for o in _listed(expected.get("other"))]
        last = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        in_path = last != name
        row: dict[str, Any] = {"name": name, "source": source}
        row["kind"] = "tv" if expected["type"] == "episode" else "movie"
        if expected.get("title"):
            row["title"] = str(expected["title"])
        if row["kind"] == "tv":
            seasons = [int(s) for s in _listed(expected.get("season"))]
            episodes = [int(e) for e in _listed(expected.get("episode"))]
            _numbering(row, seasons, episodes)
            date = expected.get("date")
            if isinstance(date, datetime.date):
                row["air_date"] = date.isoformat()
        year = expected.get("year")
        if isinstance(year, int):
            row["year"] = year
        screen_size = str(expected.get("screen_size", ""))
        source_text = str(expected.get("source", ""))
        if in_path:
            # Only what the file name itself says: guessit reads quality from folders too.
            if not any(run in last for run in _digit_runs(screen_size)):
                screen_size = ""
            if _fold(source_text) not in _fold(last):
                source_text = ""
        resolution = resolution_class(screen_size) if screen_size else None
        if resolution is not None:
            row["resolution"] = resolution
        if source_text:
            row["video_source"] = source_text
        quality_name = quality(resolution, source_text, "Remux" in others)
        if quality_name:
            row["quality"] = quality_name
        if expected.get("release_group"):
            row["group"] = str(expected["release_group"])
        if in_path:
            if not states_all(last, row):
                dropped[f"{label}: a path whose file name leaves out what the folders state"] += 1
                continue
            row["name"] = last
        # guessit states no anime; a fansub's marks (a CRC32, a [Group]) make 5070 right too.
        group = expected.get("release_group")
        fansub = (
            _opens_with_a_tag(last) or "crc32" in expected or (bool(group) and f"[{group}]" in last)
        )
        _category(row, quality_name, others, fansub)
        rows.append(row)
    return rows


def ptn_rows(
    names: list[str], outputs: list[dict[str, Any]], source: int, dropped: Counter[str]
) -> list[dict[str, Any]]:
    label = "divijbindlish/parse-torrent-name tests/files"
    rows = []
    for name, expected in zip(names, outputs, strict=True):
        seasons = _listed(expected.get("season"))
        episodes = _listed(expected.get("episode"))
        if not seasons and not episodes and "year" not in expected:
            dropped[f"{label}: states neither numbering nor year (TV or movie unknown)"] += 1
            continue
        row: dict[str, Any] = {"name": name, "source": source}
        # PTN reads no dates: a year-only row is a movie unless a TV mark (a daily date
        # "2014 11 10", SxxEyy...) says otherwise (extract._tv_marker, as for Radarr's names).
        row["kind"] = "tv" if seasons or episodes or extract._tv_marker(name) else "movie"
        row["title"] = expected["title"]
        _numbering(row, [int(s) for s in seasons], [int(e) for e in episodes])
        if "year" in expected:
            row["year"] = int(expected["year"])
        resolution = resolution_class(expected["resolution"]) if "resolution" in expected else None
        if resolution is not None:
            row["resolution"] = resolution
        source_text = str(expected.get("quality", ""))
        if source_text:
            row["video_source"] = source_text
        # PTN states one quality word; "WEBDL DVDRip" keeps its first.
        quality_name = quality(resolution, source_text.split(" ")[0], False)
        if quality_name:
            row["quality"] = quality_name
        if expected.get("group"):
            row["group"] = str(expected["group"])
        _category(row, quality_name, [], _opens_with_a_tag(name))
        rows.append(row)
    return rows


def _show(git_dir: Path, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={extract._git_dir(git_dir)}", "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def build(guessit: Path, ptn: Path) -> dict[str, Any]:
    sources: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for path in GUESSIT_FILES:
        _, last_change = extract.read_fixture(guessit, path)
        sources.append(
            {
                "repo": "guessit-io/guessit",
                "path": path,
                "commit": extract._head(guessit),
                "last_changed_in": last_change,
                "fixture": Path(path).stem,
                "label": f"guessit {Path(path).name}",
                "kind": "tv" if "episodes" in path else "movie",
            }
        )
        label = f"guessit-io/guessit {path}"
        rows += guessit_rows(_show(guessit, path), len(sources) - 1, dropped, label)
    _, last_change = extract.read_fixture(ptn, PTN_OUTPUT)
    sources.append(
        {
            "repo": "divijbindlish/parse-torrent-name",
            "path": PTN_INPUT,
            "expected_path": PTN_OUTPUT,
            "commit": extract._head(ptn),
            "last_changed_in": last_change,
            "fixture": "tests",
            "label": "parse-torrent-name tests",
            "kind": "mixed",
        }
    )
    rows += ptn_rows(
        json.loads(_show(ptn, PTN_INPUT)),
        json.loads(_show(ptn, PTN_OUTPUT)),
        len(sources) - 1,
        dropped,
    )
    unique: dict[tuple[int, str], dict[str, Any]] = {}
    for row in rows:
        row["top_level"] = 5000 if row["kind"] in ("tv", "anime") else 2000
        key = (row["source"], row["name"])
        if key in unique:  # the same file name under two folders
            dropped["the same name twice in one source (kept once)"] += 1
            continue
        unique[key] = row
    return {
        "about": [
            "Held-out real release names: the test data of other public name parsers"
            " (guessit, parse-torrent-name; sources below: repository, path, commit),"
            " with what those parsers read from them. usenet/release_names.py was not"
            " tuned on them. Built by bench/corpus/extract_holdout.py; measured by"
            " bench/bench_names.py and tests/usenet/test_release_holdout.py.",
            "Row format: release_names.json's. A row gives a field only where its source"
            " states it. episodes_or_absolute: an episode stated without a season, right"
            " when the parsed episodes or the absolute numbers equal it.",
            "A path keeps its last component only when that states the row's title and"
            " numbers; left out, by reason: dropped.",
            "Category rule: release_names.json's (bench/corpus/extract.py CATEGORY_RULE)"
            " from the quality the stated resolution and source make (quality); a"
            " category only where that quality is stated. Beyond it: 2060 for a 3D movie,"
            " 5080 for a TV documentary; a 1080p or 2160p BluRay movie not called a"
            " rip, re-encode or remux also accepts 2050 (it may be a whole disc).",
        ],
        "dropped": dict(sorted(dropped.items())),
        "sources": sources,
        "names": [unique[k] for k in sorted(unique)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guessit", type=Path, required=True, help="checkout or bare git dir")
    parser.add_argument("--ptn", type=Path, required=True, help="checkout or bare git dir")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = build(args.guessit, args.ptn)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(extract.dump(data))
    print(f"{len(data['names'])} names from {len(data['sources'])} sources -> {args.out}")
    for reason, count in data["dropped"].items():
        print(f"  dropped {count}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
