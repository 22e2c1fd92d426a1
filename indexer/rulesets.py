"""The rule set in force (placeholder until versioned rule sets are stored).

`current_rules()` is what range leases stamp and group leases hand out. The
catalog work replaces the body with the versioned, admin-edited rule sets.
"""

from __future__ import annotations

from indexer.rules import RuleSet


def current_rules() -> RuleSet:
    return RuleSet.default()
