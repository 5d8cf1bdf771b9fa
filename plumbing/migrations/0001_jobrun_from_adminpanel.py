"""JobRun moves from the console (adminpanel) to plumbing with the scheduler that owns it: the model is taken
over as it is, on the table adminpanel created (no database change here), then the table takes plumbing's name."""

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("adminpanel", "0001_jobrun"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="JobRun",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                                   verbose_name="ID")),
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("last_started_at", models.DateTimeField(
                            blank=True, null=True,
                            help_text="Claimed by a conditional UPDATE: one runner per interval.")),
                        ("last_finished_at", models.DateTimeField(blank=True, null=True)),
                        ("last_result", models.CharField(blank=True, max_length=300)),
                        ("last_error", models.TextField(blank=True)),
                        ("runs", models.PositiveIntegerField(default=0)),
                    ],
                    options={"verbose_name": "scheduled job", "ordering": ["name"],
                             "db_table": "adminpanel_jobrun"},
                ),
            ],
            database_operations=[],
        ),
        migrations.AlterModelTable(name="jobrun", table=None),
    ]
