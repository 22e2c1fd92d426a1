"""Real files for the inspection parsers, made at test time in a temporary directory.

par2 sets by par2cmdline, 7z and zip archives by 7-Zip and Python's zipfile,
over small random files; RAR archives are rarfile's test files, vendored
(tests/inspection/data/rar/README.md). Both tools come from `.ci/install-archivers`;
a missing one fails the test with that sentence rather than skipping it.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import inspection
from inspection.steps import STEPS
from tests.support.obfuscated import tool
from tests.support.usenet import yenc_body

__all__ = ["UNICODE_NAME", "md5", "random_bytes", "rar", "steps_of", "yenc_body"]

RAR_DIR = Path(__file__).resolve().parent / "data" / "rar"
UNICODE_NAME = "Ünïcode 名前 файл.mkv"


def random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


@dataclass(frozen=True)
class Par2Fixture:
    directory: Path
    index: bytes  # the .par2 index file (no recovery slices)
    volume: bytes  # a .vol file (recovery slices too)
    files: dict[str, bytes]  # name -> content of the files it covers


@pytest.fixture(scope="session")
def par2_set(tmp_path_factory: pytest.TempPathFactory) -> Par2Fixture:
    directory = tmp_path_factory.mktemp("par2")
    files = {
        UNICODE_NAME: random_bytes(30_000, 1),
        "second.nfo": random_bytes(2_000, 2),
        "third file.bin": random_bytes(70_000, 3),
    }
    for name, content in files.items():
        (directory / name).write_bytes(content)
    subprocess.run(
        [tool("par2"), "create", "-q", "-q", "-s4096", "-r10", "-n1", "set.par2", *files],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    volume = next(directory.glob("set.vol*.par2"))
    return Par2Fixture(directory, (directory / "set.par2").read_bytes(), volume.read_bytes(), files)


@pytest.fixture(scope="session")
def small_par2(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A one-file par2 index of a few hundred bytes: small enough to cut at every offset."""
    directory = tmp_path_factory.mktemp("par2-small")
    (directory / "a.bin").write_bytes(random_bytes(900, 4))
    subprocess.run(
        [tool("par2"), "create", "-q", "-q", "-s1024", "-r1", "-n1", "small.par2", "a.bin"],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    return (directory / "small.par2").read_bytes()


@pytest.fixture(scope="session")
def seven_zip_archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """7z and zip archives by 7-Zip: plain, with a password, with encrypted headers, in volumes."""
    directory = tmp_path_factory.mktemp("7z")
    (directory / UNICODE_NAME).write_bytes(random_bytes(20_000, 5))
    (directory / "b.nfo").write_bytes(b"tt0111161\r\n")
    seven = tool("7zz", "7z")
    made = {
        "plain.7z": [],
        "password.7z": ["-psecret"],
        "headers.7z": ["-psecret", "-mhe=on"],
        "volumes.7z": ["-v8k"],
        "zipcrypto.zip": ["-tzip", "-psecret"],
        "aes.zip": ["-tzip", "-psecret", "-mem=AES256"],
        "plain.zip": ["-tzip"],
        "tiny-headers.7z": [
            "-psecret",
            "-mhe=on",
        ],  # of b.nfo alone: small enough to cut everywhere
    }
    archives = {}
    for name, options in made.items():
        inputs = ["b.nfo"] if name.startswith("tiny") else [UNICODE_NAME, "b.nfo"]
        subprocess.run(
            [seven, "a", "-bd", "-y", *options, name, *inputs],
            cwd=directory,
            check=True,
            capture_output=True,
        )
        path = directory / name if "-v8k" not in options else directory / f"{name}.001"
        archives[name] = path.read_bytes()
    return archives


def rar(name: str) -> bytes:
    return (RAR_DIR / name).read_bytes()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def lines_run(parse, data: bytes) -> int:  # type: ignore[no-untyped-def]
    """The Python lines the inspection package runs on data, whatever parse returns or
    raises: a measure of its work the parser does not report itself (yEnc's STEPS count
    is its input's size, whatever it does with it). Work inside one C call (a split, a
    translate) counts as one line: those are linear in their input."""
    package = str(Path(inspection.__file__).parent)
    count = 0

    def local(frame, event, _arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame, _event, _arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code.co_filename.startswith(package) else None

    sys.settrace(calls)
    try:
        parse(data)
    except Exception:  # the caller asserts which errors may escape
        pass
    finally:
        sys.settrace(None)
    return count


def steps_of(parse, data: bytes) -> int:  # type: ignore[no-untyped-def]
    """The parser's work on data (its STEPS count), whatever it returns or raises."""
    before = STEPS.taken
    try:
        parse(data)
    except Exception:  # the caller asserts which errors may escape
        pass
    return STEPS.taken - before
