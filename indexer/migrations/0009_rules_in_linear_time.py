"""Rule patterns run under RE2 now (usenet/linear.py): republish the old defaults.

Version 1 was written with the default patterns of the time, two of which
RE2 cannot run (a lookaround) or which backtracked. Where the newest version
still holds one of them, a new version replaces it with today's default, so
every node and the coordinator keep reading subjects. A pattern of the
operator's own that RE2 cannot run stops the migration with its reason:
rewrite it in the admin's rule sets first.
"""

from __future__ import annotations

from django.db import migrations

OLD_STRIP_SEPARATORS = r"^[\s\-|:,]+|[\s\-|:,]+$"
OLD_FILENAME_TOKEN = (
    r"(?<![\w.])(?P<name>(?=[\w.+~-]*[A-Za-z])\w[\w.+~-]*\.(?:[A-Za-z][A-Za-z0-9]{1,4}|\d{3}))"
    r"(?![\w.])"
)


def _replaced(patterns, old, new):
    out = []
    for pattern in patterns:
        out += list(new) if pattern == old else [pattern]
    return out


def republish_defaults(apps, schema_editor):
    from usenet.rules import DEFAULT_FILENAME, DEFAULT_STRIP, RuleSet

    RuleSetVersion = apps.get_model("indexer", "RuleSetVersion")
    newest = RuleSetVersion.objects.order_by("-version").first()
    if newest is None:
        return
    rules = dict(newest.rules)
    rules["strip"] = _replaced(rules.get("strip", []), OLD_STRIP_SEPARATORS, DEFAULT_STRIP[-2:])
    rules["filename"] = _replaced(
        rules.get("filename", []), OLD_FILENAME_TOKEN, DEFAULT_FILENAME[-1:]
    )
    if rules == newest.rules:
        return
    RuleSet.from_dict({**rules, "version": newest.version + 1})  # raises with the reason
    RuleSetVersion.objects.create(
        version=newest.version + 1,
        rules=rules,
        created_by="migration",
        note="The default patterns rewritten for RE2 (linear-time matching).",
    )


class Migration(migrations.Migration):
    dependencies = [("indexer", "0008_rate_bucket")]
    operations = [migrations.RunPython(republish_defaults, migrations.RunPython.noop)]
