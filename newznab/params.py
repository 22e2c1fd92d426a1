"""Strict parsing of the newznab API's query parameters: a bad value is error 201,
a missing one 200 (never a silent default for something the client did send).
Text holds no NUL (error 201).
A number is ASCII digits 0-9 (usenet.numbers): "²", or "1" in Arabic-Indic digits, is a
bad value."""

from __future__ import annotations

from collections.abc import Mapping

from usenet.numbers import NotANumber, whole_number

from .errors import BadParameter, MissingParameter

MAX_INT = 2**31 - 1
MAX_CATEGORY = 999_999_999  # nine digits, as before: no category id is longer


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
    try:
        return whole_number(text, low=low, high=high)
    except NotANumber as refused:
        raise BadParameter(f"Incorrect parameter ({name}: {refused.expected})") from None


def integer_list(params: Mapping[str, str], name: str) -> list[int]:
    """`cat=2000,5030`: a comma-separated list of category ids."""
    text = params.get(name, "").strip()
    if not text:
        return []
    parts = [part.strip() for part in text.split(",") if part.strip()]
    try:
        ids = [whole_number(part, high=MAX_CATEGORY) for part in parts]
    except NotANumber:
        ids = []
    if not ids:
        raise BadParameter(f"Incorrect parameter ({name}: comma-separated category ids)")
    return ids


def flag(params: Mapping[str, str], name: str) -> bool:
    text = params.get(name, "").strip()
    if text in ("", "0"):
        return False
    if text == "1":
        return True
    raise BadParameter(f"Incorrect parameter ({name}: 0 or 1)")


def text(params: Mapping[str, str], name: str, *, max_length: int = 200) -> str:
    """Free text (a query, a group name): bounded, and without NUL, which no name
    holds and PostgreSQL cannot compare (it was a 500)."""
    value = params.get(name, "").strip()
    if len(value) > max_length:
        raise BadParameter(f"Incorrect parameter ({name}: at most {max_length} characters)")
    if "\x00" in value:
        raise BadParameter(f"Incorrect parameter ({name}: holds a NUL character; remove it)")
    return value
