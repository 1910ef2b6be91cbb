"""The memory derived from conversations: session summaries, knowledge (facts) and diaries."""

from __future__ import annotations

from django.db import models
from simple_history.models import HistoricalRecords

from memories.models.conversations import EndUser, Message, Session
from memories.models.vectors import embedding_field, embedding_model_field, hnsw_index
from memories.validators import content_field, validate_storable_json

__all__ = ["Diary", "FactToReview", "Knowledge", "KnowledgeStatus", "Summary", "SummaryMode"]


class SummaryMode(models.TextChoices):
    GENERATED = "generated"
    EXTRACTIVE = "extractive"


class Summary(models.Model):
    """The summary of one session, up to its watermark ``last_message``."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="summaries")
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="summary")
    content = models.TextField()
    mode = models.CharField(max_length=16, choices=SummaryMode.choices)
    covers_from = models.DateTimeField()
    covers_until = models.DateTimeField()
    # The watermark: the last message (in arrival order) the summary includes.
    last_message = models.ForeignKey(Message, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    message_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    embedding = embedding_field()
    embedding_model = embedding_model_field()

    class Meta:
        ordering = ["covers_from"]
        verbose_name_plural = "summaries"
        indexes = [models.Index(fields=["user", "covers_from"]), hnsw_index("summary_embedding_hnsw")]

    def __str__(self) -> str:
        return f"Summary of {self.session}"

    @property
    def embedding_text(self) -> str:
        """What is embedded: the summary text."""
        return self.content


class KnowledgeStatus(models.TextChoices):
    CANDIDATE = "candidate", "candidate (awaiting review)"
    ACTIVE = "active"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


class Knowledge(models.Model):
    """A curated fact, owned by an end user or shared (``user`` is null: system-wide).

    Facts raised from conversations are active at once and not ``reviewed`` (with their source
    session and messages), or candidates when approval comes first
    (``KNOWLEDGE_CANDIDATES_NEED_APPROVAL``); only active facts are searched. A fact that
    another replaces is kept as superseded history, pointing at its successor: within a ``slot``
    the fact said last (``said_at``) wins, whatever order facts were approved in.
    """

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="knowledge")
    content = content_field("MAX_KNOWLEDGE_CHARS")
    status = models.CharField(max_length=16, choices=KnowledgeStatus.choices, default=KnowledgeStatus.ACTIVE)
    source_session = models.ForeignKey(
        Session, on_delete=models.SET_NULL, null=True, blank=True, related_name="knowledge_candidates"
    )
    source_messages = models.ManyToManyField(Message, blank=True, related_name="knowledge_candidates")
    # For a candidate: the active fact it contradicts and will supersede once active.
    replaces = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes"
    )
    # The attribute the fact fills when a person has one value at a time ("residence", "job", ...):
    # within a user's slot only the newest fact by ``said_at`` stays active.
    slot = models.CharField(max_length=100, blank=True, default="")
    confidence = models.FloatField(null=True, blank=True, help_text="The extractor's belief in the fact, 0..1.")
    said_at = models.DateTimeField(
        null=True, blank=True, help_text="Conversation time of the turn the fact was raised from."
    )
    needs_review = models.BooleanField(
        default=False, help_text="Contradicts another active fact that has no slot: a curator decides."
    )
    # Raised from a conversation and used at once, or approved, added or edited by a person.
    reviewed = models.BooleanField(
        default=True,
        db_default=True,
        help_text="A person approved, added or edited it; a fact raised from a conversation is not.",
    )
    ends = models.BooleanField(
        default=False, db_default=False, help_text="It says a value ended (quit, moved out, split up, cancelled)."
    )
    corrected = models.BooleanField(
        default=False,
        db_default=False,
        help_text="A person changed the text raised from a conversation: its source turns are no longer quoted.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    embedding = embedding_field()
    embedding_model = embedding_model_field()
    # Audit trail: who changed what and when, with the previous text (django-simple-history).
    history = HistoricalRecords(excluded_fields=["embedding", "embedding_model"])

    class Meta:
        ordering = ["-updated_at"]
        verbose_name_plural = "knowledge"
        indexes = [models.Index(fields=["user", "status"]), hnsw_index("knowledge_embedding_hnsw")]

    def __str__(self) -> str:
        return self.content[:80]

    @property
    def embedding_text(self) -> str:
        """What is embedded: the knowledge text."""
        return self.content


class FactToReview(Knowledge):
    """The admin's review queue: facts awaiting a person (``memories.services.knowledge.knowledge_review_queue``)."""

    class Meta:
        proxy = True
        verbose_name = "fact to review"
        verbose_name_plural = "facts to review"


class Diary(models.Model):
    """One diary entry per end user per date."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="diaries")
    diary_date = models.DateField()
    content = content_field("MAX_DIARY_CHARS")
    metadata = models.JSONField(default=dict, blank=True, validators=[validate_storable_json])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    embedding = embedding_field()
    embedding_model = embedding_model_field()

    class Meta:
        ordering = ["-diary_date"]
        verbose_name_plural = "diaries"
        constraints = [models.UniqueConstraint(fields=["user", "diary_date"], name="diary_unique_per_user_date")]
        indexes = [hnsw_index("diary_embedding_hnsw")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.diary_date}"

    @property
    def embedding_text(self) -> str:
        """What is embedded: the date and the entry."""
        return f"Diary {self.diary_date.isoformat()}: {self.content}"
