"""Rule set version 1 is the default rule set, so current_rules() always has a row."""

from __future__ import annotations

from django.db import migrations


def create_version_one(apps, schema_editor):
    from usenet.rules import RuleSet

    RuleSetVersion = apps.get_model("indexer", "RuleSetVersion")
    if RuleSetVersion.objects.exists():
        return
    rules = RuleSet.default().to_dict()
    rules.pop("version")
    RuleSetVersion.objects.create(
        version=1, rules=rules, created_by="migration", note="The default rule set."
    )


class Migration(migrations.Migration):
    dependencies = [("indexer", "0003_catalog_storage")]
    operations = [migrations.RunPython(create_version_one, migrations.RunPython.noop)]
