"""Each hand-out records the lane that made it: a snapshot drops only its own lane's
hand-outs (a tail snapshot dropped the history lane's too), and a takeover resets the
ranges its lane's window worked whatever the lane bounds say now. Hand-outs recorded
before are given the lane by the range's priority (sql/migrations/handouts.sql).
"""

from django.db import migrations, models

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [("leases", "0009_lane_give_back")]

    operations = [
        migrations.AddField(
            model_name="lanehandout",
            name="lane",
            field=models.CharField(
                choices=[("history", "History"), ("tail", "Tail")], max_length=8, null=True
            ),
        ),
        migrations.RunSQL(queries["fill_handout_lanes"], migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="lanehandout",
            name="lane",
            field=models.CharField(choices=[("history", "History"), ("tail", "Tail")], max_length=8),
        ),
    ]
