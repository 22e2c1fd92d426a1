"""An index of a release's files by name, so the release triggers count a
cross-posted file once (its copy in another group is found by one probe).

It replaces the index on `release_id` alone, whose every use (a release's
page, its NZB, the recount after a prune) it serves as well. Built and
dropped CONCURRENTLY (a non-atomic migration): catalog_file is the largest
table and batches keep writing it meanwhile.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0002_release_fields"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="catalogfile",
            index=models.Index(
                models.F("release"),
                models.Func(
                    models.F("name"), function="hashtext", output_field=models.IntegerField()
                ),
                condition=models.Q(("release__isnull", False)),
                name="catalog_file_release_name_idx",
            ),
        ),
        RemoveIndexConcurrently(
            model_name="catalogfile",
            name="catalog_file_release_id_idx",
        ),
    ]
