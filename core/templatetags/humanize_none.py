"""`intcomma_plain`: 1234567 -> 1,234,567 without django.contrib.humanize's locale machinery."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


@register.filter
def intcomma_plain(value: Any) -> str:
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return "" if value is None else str(value)
