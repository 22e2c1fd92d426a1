"""The build's one step beyond pyproject.toml: usenet/release_names.py compiled with mypyc.

The release-name parser runs 2.5x as fast compiled (docs/performance.md,
"Parse speed"). `pip install .` and `make install` (an editable install,
which builds it in place) compile it with mypyc, a C compiler and the
Python headers (`.ci/install-compiler` installs them on Debian). The source
stays the module: where no compiler is found the build goes on without the
extension, with a warning, and Python imports the .py; set
RELEASE_NAMES_INTERPRETED=1 to build without it on purpose.

Beside the extension the build writes `usenet/release_names.source-sha256`,
the digest of the source it compiled: `usenet/__init__.py` imports the
compiled parser only while the source is that one (an extension built in
place would otherwise go on parsing as an edited source did before).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

SOURCE = "usenet/release_names.py"
DIGEST = "usenet/release_names.source-sha256"


class OptionalBuildExt(build_ext):
    """build_ext that warns and goes on where the extension cannot be compiled, and
    writes the source's digest beside the extension it built."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler, no Python.h: the .py is the module
            self._without(error)
            # Nor an extension an earlier build left (build/lib is packed whole into a wheel).
            root = Path() if self.inplace else Path(self.build_lib)
            for output in [*super().get_outputs(), str(root / DIGEST)]:
                Path(output).unlink(missing_ok=True)
            return
        root = Path() if self.inplace else Path(self.build_lib)
        digest = hashlib.sha256(Path(SOURCE).read_bytes()).hexdigest()
        (root / DIGEST).parent.mkdir(parents=True, exist_ok=True)
        (root / DIGEST).write_text(digest + "\n")

    def get_outputs(self) -> list[str]:
        outputs = super().get_outputs()
        if self.extensions and not self.inplace:
            outputs.append(str(Path(self.build_lib) / DIGEST))
        return outputs

    @staticmethod
    def _without(error: Exception) -> None:
        print(
            f"warning: {SOURCE} not compiled ({error}); the parser runs interpreted."
            " Install a C compiler and the Python headers (.ci/install-compiler) and"
            " reinstall to compile it.",
            file=sys.stderr,
        )


def extensions() -> list:
    if os.environ.get("RELEASE_NAMES_INTERPRETED") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as error:  # built without build isolation, and no mypy installed
        OptionalBuildExt._without(error)
        return []
    # Not pyproject.toml's [tool.mypy]: its Django plugin is no build requirement, and the
    # module imports only the standard library and usenet.numbers.
    with tempfile.TemporaryDirectory() as directory:
        config = Path(directory) / "mypy.ini"
        config.write_text("[mypy]\n")
        return mypycify(["--config-file", str(config), SOURCE], opt_level="3")


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
