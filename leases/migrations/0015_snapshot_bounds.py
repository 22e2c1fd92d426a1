"""What bounds a lane's snapshot: the articles the lane has handed out (its `next`
keeps `handed_first`/`handed_last`, filled for older lanes by
sql/migrations/handed.sql), and objects a newer upload replaced, kept until their
presigned URLs have expired (`lane_snapshot_retired`)."""

from django.db import migrations, models
from django.db.models.functions import Now

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [("leases", "0014_lane_give_back_without_error")]

    operations = [
        migrations.CreateModel(
            name="RetiredSnapshot",
            fields=[
                ("key", models.CharField(max_length=255, primary_key=True, serialize=False)),
                ("retired_at", models.DateTimeField(db_default=Now())),
            ],
            options={"db_table": "lane_snapshot_retired"},
        ),
        migrations.AddField(
            model_name="grouplane",
            name="handed_first",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="grouplane",
            name="handed_last",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.RunSQL(queries["fill_handed_spans"], migrations.RunSQL.noop),
    ]
