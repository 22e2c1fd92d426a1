"""The standard newznab categories this coordinator answers with (t=caps, cat=)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Category:
    id: int
    name: str
    subcats: tuple[tuple[int, str], ...] = ()


CATEGORIES: tuple[Category, ...] = (
    Category(2000, "Movies", ((2030, "SD"), (2040, "HD"), (2045, "UHD"))),
    Category(3000, "Audio", ((3010, "MP3"), (3040, "Lossless"))),
    Category(4000, "PC", ((4050, "Games"),)),
    Category(5000, "TV", ((5030, "SD"), (5040, "HD"), (5045, "UHD"))),
    Category(7000, "Books", ((7020, "Ebook"),)),
    Category(8000, "Other", ((8010, "Misc"),)),
)

NAMES: dict[int, str] = {
    **{c.id: c.name for c in CATEGORIES},
    **{sub: f"{c.name} > {name}" for c in CATEGORIES for sub, name in c.subcats},
}


def parent_of(category: int) -> int:
    return category - category % 1000


def expand(categories: list[int]) -> list[int]:
    """A `cat=` list with every parent standing for its subcategories too."""
    out: set[int] = set()
    for cat in categories:
        out.add(cat)
        if cat % 1000 == 0:
            out.update(sub for c in CATEGORIES if c.id == cat for sub, _ in c.subcats)
    return sorted(out)
