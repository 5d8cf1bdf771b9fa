"""JobRun now belongs to plumbing (plumbing/migrations/0001): the console forgets it without touching the table,
which plumbing took over."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("adminpanel", "0001_jobrun"),
        ("plumbing", "0001_jobrun_from_adminpanel"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="JobRun")],
            database_operations=[],
        ),
    ]
