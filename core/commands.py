"""What management commands share: their errors said as CommandError, without a
traceback; option types that refuse what makes no sense; the batch commands'
shape (a batch size, a place to resume, a progress bar)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from django.core.management.base import BaseCommand, CommandError, CommandParser

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


def positive_int(text: str) -> int:
    """An option's whole number of at least 1 (argparse says the option is invalid otherwise)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(text)
    return value


def non_negative_float(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(text)
    return value


class BatchProgress(Protocol):
    """What a batch run reports after each batch: how many it has done, of how many."""

    @property
    def releases(self) -> int: ...

    @property
    def total(self) -> int: ...


class ReleaseBatchCommand(BaseCommand):
    """A command that works through the releases in batches, one transaction each.

    It takes `--batch-size` (and `--after ID` to resume, where `resumable`),
    shows a progress bar on stderr, says domain errors as CommandError, and
    prints what `describe` makes of the run's summary. `run` does the work.
    """

    resumable = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size", type=positive_int, default=1000, help="releases per transaction"
        )
        if self.resumable:
            parser.add_argument(
                "--after", type=non_negative_int, default=0, metavar="ID",
                help="start after this release id (to resume a run)",
            )  # fmt: skip

    def run(self, options: dict[str, Any], progress: Callable[[Any], None]) -> Any:
        raise NotImplementedError

    def describe(self, summary: Any) -> str:
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> str:
        bar = ProgressBar(self.stderr._out, unit="releases")

        def progress(summary: BatchProgress) -> None:
            bar.total = summary.total
            bar.update(summary.releases)

        with command_errors(bar):
            summary = self.run(options, progress)
        return self.describe(summary)
