"""Django admin: staff browse history and curate knowledge, summaries, diaries and API keys.

Admin actions and saves are thin: they call services, which queue background work.
"""

from __future__ import annotations

from functools import partial

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet
from django.http import HttpRequest
from django.urls import path, reverse
from django.utils.html import format_html
from simple_history.admin import SimpleHistoryAdmin

from memories.admin_facts import user_facts_view
from memories.admin_playground import playground_view
from memories.models import (
    ApiKey,
    Diary,
    EndUser,
    Entity,
    FactToReview,
    Knowledge,
    KnowledgeStatus,
    Message,
    Session,
    Summary,
)
from memories.selectors import knowledge_with_later_turn
from memories.services.api_keys import api_key_assign_secret, api_key_revoke
from memories.services.curation import curated_save
from memories.services.entities import entities_merge
from memories.services.history import user_forget
from memories.services.knowledge import (
    knowledge_approve,
    knowledge_delete,
    knowledge_reject,
    knowledge_review_queue,
)
from memories.services.summaries import summaries_regenerate

admin.site.site_header = "Memory service"
admin.site.site_title = "Memory service admin"
admin.site.index_title = "Curation"
admin.site.site_url = "/graphql/"  # "View site": the service has no other page
# The lists need the width (the review queue at 1,280 px): the index and breadcrumbs lead everywhere.
admin.site.enable_nav_sidebar = False


class EmbeddingStatusMixin:
    """A list column telling whether a row's vector matches its text and the configured model."""

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .defer("embedding")
            .annotate(has_embedding=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
        )

    @admin.display(boolean=True, description="embedding current")
    def embedding_current(self, obj) -> bool:
        return bool(obj.has_embedding) and obj.embedding_model == settings.EMBEDDING_MODEL


@admin.register(EndUser)
class EndUserAdmin(admin.ModelAdmin):
    """End users; also serves the playground (``memories.admin_playground``), linked from the index."""

    list_display = ["external_id", "created_at", "facts"]
    search_fields = ["external_id"]
    ordering = ["external_id"]
    date_hierarchy = "created_at"

    def get_urls(self) -> list:
        playground = self.admin_site.admin_view(partial(playground_view, admin_site=self.admin_site))
        facts = self.admin_site.admin_view(partial(user_facts_view, admin_site=self.admin_site))
        return [
            path("playground/", playground, name="memories_playground"),
            path("<int:user_id>/facts/", facts, name="memories_enduser_facts"),
            *super().get_urls(),
        ]

    @admin.display(description="facts")
    def facts(self, obj: EndUser) -> str:
        """A link to the user's facts now and what was true when (``memories.admin_facts``)."""
        return format_html(
            '<a href="{}">current facts and history</a>', reverse("admin:memories_enduser_facts", args=[obj.pk])
        )

    def delete_model(self, request: HttpRequest, obj: EndUser) -> None:
        # As forgetUser does: no copy of the user's facts stays in their audit trail or the admin log.
        user_forget(user_external_id=obj.external_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[EndUser]) -> None:
        for user in queryset:
            self.delete_model(request, user)


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "user", "channel", "first_message_at", "last_message_at"]
    list_filter = ["channel", ("user", admin.RelatedOnlyFieldListFilter), "last_message_at"]
    search_fields = ["external_id", "user__external_id"]
    list_select_related = ["user"]
    ordering = ["-last_message_at"]
    date_hierarchy = "last_message_at"
    readonly_fields = ["user", "external_id", "channel", "first_message_at", "last_message_at", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Message)
class MessageAdmin(EmbeddingStatusMixin, admin.ModelAdmin):
    """Raw history: read-only (deletions go through the API, which also refreshes summaries)."""

    list_display = ["created_at", "user", "session", "role", "short_content", "embedding_current"]
    list_filter = ["role", "channel", ("user", admin.RelatedOnlyFieldListFilter), "created_at"]
    search_fields = ["content", "user__external_id", "session__external_id"]
    list_select_related = ["user", "session"]
    ordering = ["-created_at", "-id"]
    date_hierarchy = "created_at"
    list_per_page = 100

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:100]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Message | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Message | None = None) -> bool:
        return False


@admin.register(Summary)
class SummaryAdmin(EmbeddingStatusMixin, admin.ModelAdmin):
    list_display = ["session", "user", "mode", "covers_from", "covers_until", "message_count", "embedding_current"]
    list_filter = ["mode", ("user", admin.RelatedOnlyFieldListFilter), "covers_from"]
    search_fields = ["content", "user__external_id", "session__external_id"]
    list_select_related = ["user", "session"]
    ordering = ["-covers_from"]
    date_hierarchy = "covers_from"
    readonly_fields = [
        "user",
        "session",
        "content",
        "mode",
        "covers_from",
        "covers_until",
        "last_message",
        "message_count",
    ]
    actions = ["regenerate"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Regenerate selected summaries (in the background)")
    def regenerate(self, request: HttpRequest, queryset: QuerySet[Summary]) -> None:
        queued = summaries_regenerate(summary_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Queued {len(queued)} summaries to be written again.")


class ContradictionFilter(admin.BooleanFieldListFilter):
    """``needs_review``: an unslotted fact contradicting another active one, for a curator to settle;
    not the same as awaiting review (raised from a conversation and not checked yet)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.title = "contradicts another fact"


def _awaiting_review() -> Exists:
    """An annotation of ``Knowledge`` rows: whether the review queue holds it (the banner counts the same)."""
    return Exists(knowledge_review_queue().filter(pk=OuterRef("pk")))


@admin.register(Knowledge)
class KnowledgeAdmin(EmbeddingStatusMixin, SimpleHistoryAdmin):
    """Per-user or shared (no user) facts. Saving changed text re-embeds it in the background;
    every edit is kept in the history (who, when, previous text). Deleting goes through
    ``knowledge_delete``, as the API's ``deleteKnowledge`` does."""

    list_display = [
        "content",
        "user",
        "status",
        "slot",
        "said",
        "said_in_session",
        "awaiting_review",
        "embedding_current",
    ]
    list_filter = [
        "status",
        ("needs_review", ContradictionFilter),  # unslotted facts that contradict one another: a curator decides
        "slot",
        ("user", admin.RelatedOnlyFieldListFilter),  # includes "-": shared knowledge (no user)
        "updated_at",
    ]
    search_fields = ["content", "user__external_id"]
    list_select_related = ["user", "source_session"]
    autocomplete_fields = ["user"]
    readonly_fields = [
        "source_session",
        "source_excerpt",
        "slot",
        "said_at",
        "confidence",
        "replaces",
        "superseded_by",
    ]
    exclude = ["source_messages"]
    ordering = ["-updated_at"]
    date_hierarchy = "updated_at"
    history_list_display = ["content", "status", "superseded_by"]
    actions = ["approve", "reject"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Knowledge]:
        return super().get_queryset(request).annotate(awaiting_review=_awaiting_review())

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        awaiting = knowledge_review_queue().count()
        return super().changelist_view(request, {**(extra_context or {}), "candidates_awaiting": awaiting})

    @admin.display(boolean=True, description="awaiting review", ordering="awaiting_review")
    def awaiting_review(self, obj: Knowledge) -> bool:
        """In the review queue: a candidate, or raised from a conversation and not checked yet."""
        return obj.awaiting_review

    @admin.display(description="said", ordering="said_at")
    def said(self, obj: Knowledge) -> str:
        """When the fact was said (conversation time, UTC), compactly."""
        return f"{obj.said_at:%Y-%m-%d %H:%M}" if obj.said_at else "-"

    @admin.display(description="said in session", ordering="source_session__external_id")
    def said_in_session(self, obj: Knowledge) -> str:
        """The chatbot's id of the session the fact was raised from."""
        return obj.source_session.external_id if obj.source_session_id else "-"

    @admin.display(description="said in")
    def source_excerpt(self, obj: Knowledge) -> str:
        """The messages a fact was raised from, for the reviewer."""
        lines = [f"{m.created_at:%Y-%m-%d %H:%M} {m.speaker}: {m.content}" for m in obj.source_messages.all()[:10]]
        return "\n".join(lines) or "-"

    def save_model(self, request: HttpRequest, obj: Knowledge, form, change: bool) -> None:
        # Approving one candidate by setting its status goes through the same path as the action.
        before = Knowledge.objects.filter(pk=obj.pk).values_list("status", flat=True).first()
        approving = before == KnowledgeStatus.CANDIDATE and obj.status == KnowledgeStatus.ACTIVE
        if approving:
            obj.status = KnowledgeStatus.CANDIDATE
        obj.reviewed = obj.reviewed or not approving  # a person wrote or checked what it says now
        curated_save(row=obj)
        if approving:
            knowledge_approve(knowledge_ids=[obj.pk])

    def delete_model(self, request: HttpRequest, obj: Knowledge) -> None:
        # As deleteKnowledge does: the fact it superseded comes back, and no copy of its text stays behind.
        knowledge_delete(knowledge_id=obj.pk, user_external_id=obj.user.external_id if obj.user_id else None)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Knowledge]) -> None:
        for knowledge in queryset.select_related("user"):
            self.delete_model(request, knowledge)

    @admin.action(description="Approve selected facts awaiting review (candidates become active and searched)")
    def approve(self, request: HttpRequest, queryset: QuerySet[Knowledge]) -> None:
        count = knowledge_approve(knowledge_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Approved {count} fact(s).")

    @admin.action(description="Reject selected facts awaiting review (never searched, never raised again)")
    def reject(self, request: HttpRequest, queryset: QuerySet[Knowledge]) -> None:
        count = knowledge_reject(knowledge_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, f"Rejected {count} fact(s).")


@admin.register(FactToReview)
class FactToReviewAdmin(KnowledgeAdmin):
    """The review queue: facts raised from conversations that no person has checked (used at once, or
    candidates when approval comes first), newest first, each with the turns it was raised from.
    Approve or reject with the actions, or correct the text in the list (saving it counts as reviewed)."""

    list_display = ["fact_page", "content", "user", "slot", "said_in", "status"]
    list_display_links = None
    list_editable = ["content"]
    list_filter = ["status", "slot", ("user", admin.RelatedOnlyFieldListFilter)]
    ordering = ["-created_at", "-id"]
    date_hierarchy = None

    def get_changelist_form(self, request: HttpRequest, **kwargs: object) -> type[forms.ModelForm]:
        # One line a fact, corrected in place (in full on its page).
        kwargs.setdefault("widgets", {"content": forms.TextInput(attrs={"size": 36})})
        return super().get_changelist_form(request, **kwargs)

    @admin.display(description="fact", ordering="id")
    def fact_page(self, obj: Knowledge) -> str:
        """A link to the fact's page: its whole text, source turns, status and history."""
        return format_html('<a href="{}">#{}</a>', reverse("admin:memories_knowledge_change", args=[obj.pk]), obj.pk)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Knowledge]:
        queue = super().get_queryset(request).filter(pk__in=knowledge_review_queue().values("pk"))
        return knowledge_with_later_turn(queue.prefetch_related("source_messages"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Knowledge, form, change: bool) -> None:
        # Saved as the fact itself, so that its audit history records the correction.
        fact = Knowledge.objects.get(pk=obj.pk)
        for name in form.changed_data:
            setattr(fact, name, getattr(obj, name))
        super().save_model(request, fact, form, change)

    @admin.display(description="source turn", ordering="said_at")
    def said_in(self, obj: Knowledge) -> str:
        """When it was said, in which session, and the (latest) turn it was raised from, cut to a line or two;
        below it, flagged, a later turn on the fact's slot that may have replaced it."""
        turns = list(obj.source_messages.all())
        turn = max(turns, key=lambda m: (m.created_at, m.pk), default=None)
        said = format_html(
            '<span class="said-when">{} · {}</span><br>{}',
            f"{obj.said_at:%Y-%m-%d %H:%M}" if obj.said_at else "-",
            obj.source_session.external_id if obj.source_session_id else "-",
            _quoted(turn),
        )
        later = Message.objects.filter(pk=obj.later_turn_id).first() if obj.later_turn_id else None
        if later is None:
            return said
        return format_html(
            '{}<br><span class="replaced-flag">⚠ may be replaced by a later turn ({}):</span> {}',
            said,
            f"{later.created_at:%Y-%m-%d %H:%M}",
            _quoted(later),
        )


def _quoted(turn: Message | None) -> str:
    """A turn as "speaker: text", cut to a line or two."""
    quote = f"{turn.speaker}: {turn.content}" if turn else ""
    return quote if len(quote) <= 140 else quote[:139] + "…"


@admin.register(Diary)
class DiaryAdmin(EmbeddingStatusMixin, admin.ModelAdmin):
    list_display = ["diary_date", "user", "content", "updated_at", "embedding_current"]
    list_filter = [("user", admin.RelatedOnlyFieldListFilter), "diary_date"]
    search_fields = ["content", "user__external_id"]
    list_select_related = ["user"]
    autocomplete_fields = ["user"]
    ordering = ["-diary_date"]
    date_hierarchy = "diary_date"

    def save_model(self, request: HttpRequest, obj: Diary, form, change: bool) -> None:
        curated_save(row=obj)


@admin.register(Entity)
class EntityAdmin(admin.ModelAdmin):
    """Rename (edit the name), delete, or merge entities: the merge keeps the first selected as listed."""

    list_display = ["name", "kind", "user", "aliases", "last_mentioned_at", "first_mentioned_at"]
    list_filter = ["kind", ("user", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "user__external_id"]
    list_select_related = ["user"]
    fields = ["user", "name", "kind", "aliases", "first_mentioned_at", "last_mentioned_at", "knowledge"]
    readonly_fields = ["user", "first_mentioned_at", "last_mentioned_at"]
    filter_horizontal = ["knowledge"]
    ordering = ["-last_mentioned_at", "id"]
    actions = ["merge"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # raised from conversations

    @admin.action(description="Merge selected into the first (names become its aliases; facts and turns move)")
    def merge(self, request: HttpRequest, queryset: QuerySet[Entity]) -> None:
        selected = {e.pk: e for e in queryset}
        # The rows as listed and ticked; "select all" sends no ids: then the list's order.
        posted = [int(i) for i in request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME) if i.isdigit()]
        ids = [i for i in posted if i in selected] or [e.pk for e in queryset.order_by(*self.ordering)]
        try:
            target = entities_merge(entity_ids=ids)
        except ValueError as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        self.message_user(request, f"Merged {len(ids) - 1} other entities into {target.name!r}.")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created here or with ``manage.py create_api_key``; the secret is shown once."""

    list_display = ["name", "prefix", "all_users", "may_curate", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["all_users", "may_curate", "revoked_at"]
    search_fields = ["name", "prefix", "user_external_ids"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
    ordering = ["-created_at"]
    actions = ["revoke"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form, change: bool) -> None:
        raw_key = None if change else api_key_assign_secret(key=obj)
        super().save_model(request, obj, form, change)
        if raw_key:
            self.message_user(request, f"New API key (shown only now, copy it): {raw_key}", messages.WARNING)

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        key_ids = list(queryset.filter(revoked_at__isnull=True).values_list("pk", flat=True))
        for key_id in key_ids:
            api_key_revoke(key_id=key_id)
        self.message_user(request, f"Revoked {len(key_ids)} key(s).")
