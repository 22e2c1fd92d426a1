"""What the coordinator and the seed node share, with no Django: the NNTP client
and pool, overview parsing, subject rules and the limits of what a node reports.

Both sides import this package; it imports only the standard library
(docs/architecture.md).
"""

import hashlib
import importlib.machinery
import importlib.util
import sys
import warnings
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def compiled_parser_is_current(directory: Path = _PACKAGE) -> bool | None:
    """Whether the compiled release-name parser in `directory` was built from the
    release_names.py beside it; None: no compiled parser there.

    setup.py compiles release_names.py with mypyc (`make install` builds the
    extension in place, beside the source, and Python imports an extension before
    a .py) and writes the digest of the source it compiled to
    release_names.source-sha256.
    """
    if not any(
        (directory / f"release_names{suffix}").exists()
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
    ):
        return None
    try:
        built = (directory / "release_names.source-sha256").read_text().strip()
    except OSError:
        return False
    return hashlib.sha256((directory / "release_names.py").read_bytes()).hexdigest() == built


def _interpreted_parser_while_stale() -> None:
    """An edited release_names.py is the parser, not the extension built from the one before
    it: the source is imported instead, with a warning saying how to compile it again."""
    if compiled_parser_is_current() is not False:
        return
    warnings.warn(
        "usenet/release_names.py changed since it was compiled: the parser runs interpreted"
        " until `make install` compiles it again",
        RuntimeWarning,
        stacklevel=2,
    )
    spec = importlib.util.spec_from_file_location(
        f"{__name__}.release_names", _PACKAGE / "release_names.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


_interpreted_parser_while_stale()
