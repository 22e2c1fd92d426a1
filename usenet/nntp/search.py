"""Find the first article of a group posted at or after a moment.

Bisects the article numbers with small OVER probes of `PROBE_SIZE` articles, about
log2(articles / PROBE_SIZE) + 1 of them. How it copes with holes, unreadable dates
and dates out of order, and what it promises: docs/seed-node.md ("Date search").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from usenet.nntp.client import GroupInfo
from usenet.nntp.errors import NoArticles
from usenet.numbers import ascii_digits
from usenet.overview import parse_date

PROBE_SIZE = 50


class OverviewReader(Protocol):
    def group(self, name: str) -> GroupInfo: ...

    def over(self, first: int, last: int | None = None) -> Iterator[bytes]: ...


@dataclass(frozen=True)
class DateSearchResult:
    article: int
    probes: int


def article_at_date(client: OverviewReader, group: str, when: int) -> int:
    """The lowest article number of `group` posted at or after Unix time `when`."""
    return find_article_at_date(client, group, when).article


def find_article_at_date(
    client: OverviewReader, group: str, when: int, *, probe_size: int = PROBE_SIZE
) -> DateSearchResult:
    """Like article_at_date, and also tells how many OVER probes it took."""
    return _DateSearch(client, group, when, probe_size).run()


@dataclass
class _DateSearch:
    client: OverviewReader
    group: str
    when: int
    probe_size: int
    probes: int = 0
    # Invariant: the answer lies in [low, high]; `high` is an article dated
    # >= when, or last + 1 while none has been seen.
    low: int = 0
    high: int = 0
    # Windows sit on one grid of `probe_size` cells, so a cell found empty
    # inside a hole is never probed again by a later, nearby middle.
    origin: int = 0
    empty_cells: set[int] = field(default_factory=set)

    def run(self) -> DateSearchResult:
        info = self.client.group(self.group)
        if info.count == 0 or info.last < info.first:
            return DateSearchResult(article=info.first, probes=0)
        self.low, self.high = info.first, info.last + 1
        self.origin = info.first
        scanned_all = False
        while self.high - self.low > self.probe_size:
            dated = self._sample_near_middle()
            if dated is None:
                # Sparse probes saw nothing: read what remains once and be done.
                self._narrow(self._probe(self.low, self.high - 1))
                scanned_all = True
                break
            self._narrow(dated)
        if not scanned_all and self.low < self.high:
            self._narrow(self._probe(self.low, self.high - 1))
        article = self.high if self.high <= info.last else info.last
        return DateSearchResult(article=article, probes=self.probes)

    def _sample_near_middle(self) -> list[tuple[int, int]] | None:
        """Dated articles from the first non-empty window near the middle of the range."""
        size = self.probe_size
        for first, last in self._windows_near_middle():
            cell = (first - self.origin) // size
            if cell in self.empty_cells:
                continue
            dated = self._probe(first, last)
            if dated:
                return dated
            if first == self.origin + cell * size and last - first + 1 == size:
                self.empty_cells.add(cell)
        return None

    def _windows_near_middle(self) -> Iterator[tuple[int, int]]:
        low, high, size = self.low, self.high - 1, self.probe_size
        middle = (low + high) // 2
        middle -= (middle - self.origin) % size
        distance = 0
        while middle + distance <= high or middle - distance + size - 1 >= low:
            if middle + distance <= high:
                yield max(middle + distance, low), min(middle + distance + size - 1, high)
            if distance and middle - distance + size - 1 >= low:
                yield max(middle - distance, low), min(middle - distance + size - 1, high)
            distance = distance * 2 if distance else size

    def _probe(self, first: int, last: int) -> list[tuple[int, int]]:
        """(article, date) of the articles in first..last that exist and have a usable date."""
        self.probes += 1
        dated = []
        try:
            for line in self.client.over(first, last):
                fields = line.split(b"\t", 4)
                if len(fields) < 4 or not ascii_digits(fields[0]):
                    continue
                posted = parse_date(fields[3].decode("latin-1"))
                if posted is not None:
                    dated.append((int(fields[0]), posted))
        except NoArticles:
            return []
        return dated

    def _narrow(self, dated: list[tuple[int, int]]) -> None:
        # Every article up to the latest older one is taken as older too (the
        # tolerance for out-of-order dates); the answer is the first newer after it.
        older = [number for number, posted in dated if posted < self.when]
        if older:
            self.low = max(self.low, max(older) + 1)
        newer = [number for number, posted in dated if posted >= self.when and number >= self.low]
        if newer:
            self.high = min(self.high, min(newer))
