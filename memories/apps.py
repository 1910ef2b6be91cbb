from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    """The memory service: history, summaries, knowledge, diaries and search."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "memories"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate
        from django_q.signals import post_execute
        from simple_history.signals import pre_create_historical_record

        from memories import checks  # noqa: F401 - registers the system checks
        from memories.services.curation import history_record_actor
        from memories.tasks import record_failure, record_success_after_failure

        post_migrate.connect(_ensure_schedules, sender=self)
        pre_create_historical_record.connect(history_record_actor, dispatch_uid="memories-history-record-actor")
        post_execute.connect(record_success_after_failure, dispatch_uid="memories-record-success-after-failure")
        post_execute.connect(record_failure, dispatch_uid="memories-record-failure")


def _ensure_schedules(sender: AppConfig, **kwargs: object) -> None:
    """After ``migrate``, create or update the django-q2 schedules (idempotent)."""
    from memories.services.schedules import schedules_ensure

    schedules_ensure()
