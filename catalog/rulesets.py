"""The rule set in force: the newest RuleSetVersion, cached in this process.

`current_rules()` is on every lease and batch, so it must be cheap: the
parsed RuleSet is kept in memory and the newest version number is checked
(one index-only query) at most every RULES_CHECK_SECONDS. Publishing a
version in this process forgets the cache at once and again at commit; other processes see it
within RULES_CHECK_SECONDS.

Category rules stored before they ran under RE2 may hold a pattern RE2
refuses: such a rule is skipped (logged once per process) and the others stay
in force, so no batch fails on it; the rule-set form shows it and refuses to
publish it again until it is rewritten.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

from usenet.categories import CategoryRules
from usenet.rules import RuleSet

from .retired_categories import is_retired_default
from .sql import queries

log = logging.getLogger(__name__)

# A query and its parameters in, its row (or None) out.
RowFetch = Callable[[str, dict[str, Any]], "tuple[Any, ...] | None"]

_lock = threading.Lock()
_cached: tuple[float, RuleSet] | None = None
# Category rules by rule set version (a version never changes once published).
_categories: dict[int, CategoryRules] = {}


def _newest_version() -> int | None:
    row = queries.fetchone("newest_rule_version", {})
    return None if row is None or row.version is None else int(row.version)


def rules_of_version(version: int, fetch: RowFetch | None = None) -> RuleSet:
    """Rule set `version` (LookupError if it was never published).

    `fetch`: runs the query on a session of the caller's own and answers its
    row, for a thread that is not the request's (an upload read by object
    storage's threads; the caller maps that session's failures); Django's
    connection otherwise.
    """
    if fetch is None:
        row = queries.fetchone("rule_set_of_version", {"version": version})
        stored = None if row is None else row.rules
    else:
        found = fetch(queries["rule_set_of_version"], {"version": version})
        stored = None if found is None else found[0]
    if stored is None:
        raise LookupError(f"Rule set version {version} does not exist.")
    # Django has psycopg hand jsonb over as text (its JSONField decodes it).
    data = json.loads(stored) if isinstance(stored, str) else stored
    return RuleSet.from_dict({**data, "version": version})


def current_rules() -> RuleSet:
    global _cached
    now = time.monotonic()
    with _lock:
        hit = _cached
    if hit is not None and now - hit[0] < settings.RULES_CHECK_SECONDS:
        return hit[1]
    version = _newest_version()
    if version is None:
        # Only before the first migration has run (version 1 is made there).
        rules = RuleSet.default()
    elif hit is not None and hit[1].version == version:
        rules = hit[1]
    else:
        rules = rules_of_version(version)
    with _lock:
        _cached = (now, rules)
    return rules


def category_rules(version: int) -> CategoryRules:
    """The operator's category rules of rule set `version`: overrides, checked before the
    category a release's parsed name gives (catalog.release_fields.decide_category).

    NULL in the row: none. A stored copy of a retired default rule (the form
    offered them for editing, so most stored rule sets hold them) is left out:
    it is the old way of deciding, not an operator's choice (catalog.retired_categories).
    """
    with _lock:
        hit = _categories.get(version)
    if hit is not None:
        return hit
    row = queries.fetchone("category_rules_of_version", {"version": version})
    data = None if row is None else row.categories
    if isinstance(data, str):
        data = json.loads(data)
    stored = [rule for rule in data or [] if not is_retired_default(rule)]
    rules = CategoryRules(stored, skip_refused=True)
    for reason in rules.refused:
        log.warning("Rule set v%s: a category rule is skipped. %s", version, reason)
    with _lock:
        _categories[version] = rules
    return rules


def forget_current_rules() -> None:
    """Drop the cached rule set (after publishing one, and between tests)."""
    global _cached
    with _lock:
        _cached = None
        _categories.clear()


__all__ = ["category_rules", "current_rules", "forget_current_rules", "rules_of_version"]
