"""One definition of "the release near these dates" for the batch path:
`catalog_release_near` (sql/migrations/releases.sql), which sql/releases.sql
calls both to find a batch's releases and to create them under lock."""

from django.db import migrations

from indexer.sql import queries


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0013_audit_api_keys'),
    ]

    operations = [
        migrations.RunSQL(
            queries["create_release_near_function"], queries["drop_release_near_function"]
        ),
    ]
