"""The newznab categories as t=caps lists them and `cat=` reads them: the
catalog's own (usenet.categories), parents with their subcategories."""

from __future__ import annotations

from dataclasses import dataclass

from usenet.categories import CATEGORIES as NAMES


@dataclass(frozen=True, slots=True)
class Category:
    id: int
    name: str
    subcats: tuple[tuple[int, str], ...] = ()


CATEGORIES: tuple[Category, ...] = tuple(
    Category(
        parent,
        name,
        tuple(
            (sub, sub_name.split("/", 1)[-1])
            for sub, sub_name in sorted(NAMES.items())
            if sub != parent and sub - sub % 1000 == parent
        ),
    )
    for parent, name in sorted(NAMES.items())
    if parent % 1000 == 0
)


def expand(categories: list[int]) -> list[int]:
    """A `cat=` list with every parent standing for its subcategories too."""
    out: set[int] = set()
    for cat in categories:
        out.add(cat)
        if cat % 1000 == 0:
            out.update(sub for sub in NAMES if sub - sub % 1000 == cat)
    return sorted(out)


def display_name(category: int) -> str:
    """ "TV > HD", the form feeds carry in <category>."""
    return NAMES.get(category, NAMES.get(category - category % 1000, "Other")).replace("/", " > ")


def parent_of(category: int) -> int:
    return category - category % 1000
