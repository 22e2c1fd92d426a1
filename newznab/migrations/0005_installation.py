"""This installation's identity, which release guids carry."""

from django.db import migrations

from newznab.sql import queries


class Migration(migrations.Migration):
    dependencies = [("newznab", "0004_release_season")]

    operations = [
        migrations.RunSQL(queries["create_installation"], queries["drop_installation"]),
    ]
