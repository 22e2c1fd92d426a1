"""Strict parsing of the newznab API's query parameters: a bad value is error 201,
a missing one 200 (never a silent default for something the client did send)."""

from __future__ import annotations

from collections.abc import Mapping

from .errors import BadParameter, MissingParameter

MAX_INT = 2**31 - 1


def required(params: Mapping[str, str], name: str) -> str:
    value = params.get(name, "").strip()
    if not value:
        raise MissingParameter(f"Missing parameter ({name})")
    return value


def integer(
    params: Mapping[str, str],
    name: str,
    default: int | None = None,
    *,
    low: int = 0,
    high: int = MAX_INT,
) -> int | None:
    text = params.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise BadParameter(f"Incorrect parameter ({name}: a whole number from {low} to {high})")
    return int(text)


def integer_list(params: Mapping[str, str], name: str) -> list[int]:
    """`cat=2000,5030`: a comma-separated list of category ids."""
    text = params.get(name, "").strip()
    if not text:
        return []
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() and len(part) <= 9 for part in parts):
        raise BadParameter(f"Incorrect parameter ({name}: comma-separated category ids)")
    return [int(part) for part in parts]


def flag(params: Mapping[str, str], name: str) -> bool:
    text = params.get(name, "").strip()
    if text in ("", "0"):
        return False
    if text == "1":
        return True
    raise BadParameter(f"Incorrect parameter ({name}: 0 or 1)")


def text(params: Mapping[str, str], name: str, *, max_length: int = 200) -> str:
    value = params.get(name, "").strip()
    if len(value) > max_length:
        raise BadParameter(f"Incorrect parameter ({name}: at most {max_length} characters)")
    return value
