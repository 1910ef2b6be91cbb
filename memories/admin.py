"""Django admin: staff browse history and curate knowledge, summaries and diaries."""

from django.contrib import admin, messages
from django.utils import timezone

from memories.models import ApiKey, Diary, EndUser, Knowledge, Message, Session, Summary
from memories.services.api_keys import api_key_assign_secret


@admin.register(EndUser)
class EndUserAdmin(admin.ModelAdmin):
    list_display = ["external_id", "created_at"]
    search_fields = ["external_id"]


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "user", "channel", "first_message_at", "last_message_at"]
    list_filter = ["channel"]
    search_fields = ["external_id", "user__external_id"]
    list_select_related = ["user"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["created_at", "user", "session", "role", "short_content", "embedding_model"]
    list_filter = ["role", "channel"]
    search_fields = ["content", "user__external_id", "session__external_id"]
    list_select_related = ["user", "session"]
    date_hierarchy = "created_at"

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:100]

    def has_change_permission(self, request, obj=None) -> bool:  # noqa: ANN001 - raw history is read-only
        return False

    def has_add_permission(self, request) -> bool:  # noqa: ANN001
        return False


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = ["session", "user", "mode", "covers_from", "covers_until", "message_count", "updated_at"]
    list_filter = ["mode"]
    search_fields = ["content", "user__external_id", "session__external_id"]
    list_select_related = ["user", "session"]
    readonly_fields = ["last_message"]


@admin.register(Knowledge)
class KnowledgeAdmin(admin.ModelAdmin):
    list_display = ["content", "user", "updated_at", "embedding_model"]
    search_fields = ["content", "user__external_id"]
    list_select_related = ["user"]
    autocomplete_fields = ["user"]


@admin.register(Diary)
class DiaryAdmin(admin.ModelAdmin):
    list_display = ["diary_date", "user", "content", "updated_at"]
    search_fields = ["content", "user__external_id"]
    list_select_related = ["user"]
    autocomplete_fields = ["user"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created here or with ``manage.py create_api_key``; the secret is shown once."""

    list_display = ["name", "prefix", "all_users", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["all_users", "revoked_at"]
    search_fields = ["name", "prefix", "users__external_id"]
    filter_horizontal = ["users"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    actions = ["revoke"]

    def save_model(self, request, obj, form, change) -> None:  # noqa: ANN001
        raw_key = None if change else api_key_assign_secret(key=obj)
        super().save_model(request, obj, form, change)
        if raw_key:
            self.message_user(request, f"New API key (shown only now, copy it): {raw_key}", messages.WARNING)

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset) -> None:  # noqa: ANN001
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} key(s).")
