"""What management commands share: their errors said as CommandError, without a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError

from core.errors import DomainError
from core.progress import ProgressBar
from usenet.nntp import NNTPError


@contextmanager
def command_errors(bar: ProgressBar | None = None, after: str = "") -> Iterator[None]:
    """Domain and news-server errors as CommandError (`after` ends the latter); `bar` finishes."""
    try:
        yield
    except DomainError as exc:
        raise CommandError(exc.detail) from None
    except NNTPError as exc:
        raise CommandError(f"The news server failed: {exc}{after}") from None
    finally:
        if bar is not None:
            bar.finish()
