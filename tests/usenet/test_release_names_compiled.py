"""The compiled release-name parser: which module is loaded, and that it reads every name as
its source does interpreted.

setup.py compiles usenet/release_names.py with mypyc (`make install`, `pip install .`):
the extension is the module, and the .py the fallback where no C compiler was found
(RELEASE_NAMES_INTERPRETED=1 builds without it on purpose) or where the source changed
since it was compiled (usenet/__init__.py imports the .py then).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import usenet
from tests.support.name_corpus import HOLDOUT, load
from tests.support.parsed_fields import fields, interpreted, load_expected
from usenet import compiled_parser_is_current, release_names

PACKAGE = Path(usenet.__file__).parent
BUILT_INTERPRETED = os.environ.get("RELEASE_NAMES_INTERPRETED") == "1"


def test_the_compiled_parser_is_the_one_loaded():
    if BUILT_INTERPRETED:
        assert not release_names.COMPILED
        return
    assert release_names.COMPILED, (
        "usenet.release_names runs interpreted: `make install` compiles it (a C compiler"
        " and the Python headers are needed: .ci/install-compiler)"
    )
    assert compiled_parser_is_current() is True
    assert Path(release_names.__file__).suffix == ".so"
    assert not interpreted().COMPILED


def test_compiled_and_interpreted_read_every_name_alike():
    if not release_names.COMPILED:
        pytest.skip("built without the compiled parser (RELEASE_NAMES_INTERPRETED=1)")
    names = [name for name, _ in load_expected()]  # both corpora, the test strings, generated
    assert len(names) > 4_000
    source = interpreted()
    differences = [
        name
        for name in names
        if fields(release_names.parse_release_name(name)) != fields(source.parse_release_name(name))
        or release_names.title_key(name) != source.title_key(name)
    ]
    assert not differences, f"{len(differences)} names differ; the first: {differences[:5]}"


def test_held_out_and_hostile_names_read_alike_compiled_and_interpreted():
    if not release_names.COMPILED:
        pytest.skip("built without the compiled parser (RELEASE_NAMES_INTERPRETED=1)")
    source = interpreted()
    names = [row["name"] for row in load(HOLDOUT)["names"]]
    names += ["S01E01-E250." * 1_000, "\ud800Show.S01E01", "第1-250集 " * 1_300, "x" * 10_000]
    for name in names:
        assert fields(release_names.parse_release_name(name)) == fields(
            source.parse_release_name(name)
        ), name


def test_a_compiled_parser_counts_as_current_only_built_from_the_source_beside_it(tmp_path):
    (tmp_path / "release_names.py").write_text("VALUE = 1\n")
    assert compiled_parser_is_current(tmp_path) is None  # nothing compiled
    (tmp_path / "release_names.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    assert compiled_parser_is_current(tmp_path) is False  # no digest: not known to be current
    digest = "1f6d2b0b1f8b2d1c0c7e9a2b5d6f8e3a4c5b6a7d8e9f0a1b2c3d4e5f6a7b8c9d"
    (tmp_path / "release_names.source-sha256").write_text(digest + "\n")
    assert compiled_parser_is_current(tmp_path) is False
    actual = hashlib.sha256(b"VALUE = 1\n").hexdigest()
    (tmp_path / "release_names.source-sha256").write_text(actual + "\n")
    assert compiled_parser_is_current(tmp_path) is True
    (tmp_path / "release_names.py").write_text("VALUE = 2\n")
    assert compiled_parser_is_current(tmp_path) is False


def test_an_edited_source_is_imported_instead_of_the_extension_built_before_it(tmp_path):
    if not release_names.COMPILED:
        pytest.skip("built without the compiled parser (RELEASE_NAMES_INTERPRETED=1)")
    copy = tmp_path / "usenet"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "nntp"))
    probe = (
        "import warnings; warnings.simplefilter('error', RuntimeWarning)\n"
        "import usenet.release_names as r; print(r.COMPILED, r.__file__)\n"
    )

    def loaded() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", probe],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            timeout=60,
        )

    done = loaded()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"True {copy}/release_names.cpython"), done.stdout
    with (copy / "release_names.py").open("a") as source:
        source.write("\nEDITED = True\n")
    done = loaded()
    assert "changed since it was compiled" in done.stderr  # the warning, raised as an error
    probe = probe.replace("'error'", "'ignore'") + "print(r.EDITED)\n"
    done = loaded()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"False {copy}/release_names.py", "True"]
