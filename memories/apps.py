from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    """The memory service: history, summaries, knowledge, diaries and search."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "memories"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from memories import checks  # noqa: F401 - registers the system checks

        post_migrate.connect(_ensure_schedules, sender=self)


def _ensure_schedules(sender: AppConfig, **kwargs: object) -> None:
    """After ``migrate``, create or update the django-q2 schedules (idempotent)."""
    from memories.services.schedules import schedules_ensure

    schedules_ensure()
