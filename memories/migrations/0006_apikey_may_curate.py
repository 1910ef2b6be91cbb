from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0005_entities"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="may_curate",
            field=models.BooleanField(
                default=False, help_text="May approve, reject and edit fact candidates through the API."
            ),
        ),
    ]
