"""Planning reads new releases first, then the backlog newest first: the plan mark gains
where the backlog is (below_id). A mark made before read everything below its after_id:
its backlog is done (0)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inspections', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='inspectionplanmark',
            name='below_id',
            field=models.BigIntegerField(default=0),
        ),
    ]
