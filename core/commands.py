"""What management commands share: their errors said as CommandError, without a traceback."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from django.core.management.base import CommandError

from core.errors import DomainError
from core.progress import ProgressBar
from usenet.nntp import NNTPError


@contextmanager
def command_errors(
    bar: ProgressBar | None = None,
    after: str = "",
    exit_codes: Mapping[type[DomainError], int] | None = None,
) -> Iterator[None]:
    """Domain and news-server errors as CommandError (`after` ends the latter); `bar` finishes.

    `exit_codes` gives a domain error (or its nearest listed base) its own exit
    status, so a script can tell the failures apart; any other exits 1.
    """
    try:
        yield
    except DomainError as exc:
        raise CommandError(exc.detail, returncode=exit_code(exc, exit_codes or {})) from None
    except NNTPError as exc:
        raise CommandError(f"The news server failed: {exc}{after}") from None
    finally:
        if bar is not None:
            bar.finish()


def exit_code(error: DomainError, codes: Mapping[type[DomainError], int]) -> int:
    """The exit status of the nearest class of `error` listed in `codes`; 1 if none is."""
    return next((codes[cls] for cls in type(error).__mro__ if cls in codes), 1)
