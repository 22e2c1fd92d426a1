"""Seed nodes join the base app (nodes and tokens authenticate every API call).

The table stays `seed_node`: this only moves the model in Django's state,
together with seeding 0007 and leases 0003, and renames the content type so
permissions and admin history granted on nodes carry over.
"""

from __future__ import annotations

from django.db import migrations, models


def move_content_type(apps, schema_editor, source="seeding", target="indexer"):
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label=target, model="node").exists():
        content_type.objects.filter(app_label=source, model="node").update(app_label=target)


def move_content_type_back(apps, schema_editor):
    move_content_type(apps, schema_editor, source="indexer", target="seeding")


class Migration(migrations.Migration):
    dependencies = [
        ("indexer", "0005_audit_entry"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Node",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("token_hash", models.CharField(max_length=64, unique=True)),
                        ("disabled", models.BooleanField(default=False)),
                        ("last_seen_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={"db_table": "seed_node", "ordering": ["name"]},
                ),
            ],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
