"""End users, their sessions and the messages of those sessions: the raw conversation."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from memories.models.vectors import embedding_field, embedding_model_field, hnsw_index
from memories.validators import content_field, id_field, validate_aware_moment, validate_storable_json

__all__ = ["DialogueAct", "EndUser", "Message", "Role", "Session"]


class EndUser(models.Model):
    """A user of a chatbot, known by the chatbot's own id (not a Django auth user)."""

    external_id = id_field(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["external_id"]
        verbose_name = "end user"

    def __str__(self) -> str:
        return self.external_id


class Session(models.Model):
    """One conversation of an end user, known by the chatbot's session id."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="sessions")
    external_id = id_field(max_length=255)
    channel = id_field(max_length=64, blank=True)
    first_message_at = models.DateTimeField(null=True, blank=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When a message last arrived (server clock): idle sessions are summarised from this.
    updated_at = models.DateTimeField(auto_now=True)
    # When createSummaries asked for a summary not written yet (it is due then, not once idle).
    summary_requested_at = models.DateTimeField(null=True, blank=True)
    # The newest message (by id) fact extraction has read: user turns after it wait for facts.
    facts_read_through = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "external_id"], name="session_unique_per_user")]
        ordering = ["user", "first_message_at"]
        indexes = [models.Index(fields=["user", "last_message_at"])]

    def __str__(self) -> str:
        return self.external_id  # the chatbot's id of the session; its user is shown beside it


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


class DialogueAct(models.TextChoices):
    """What a turn does (read by ``memories.llm.reader``): states something, asks, or only acknowledges."""

    STATEMENT = "statement"
    QUESTION = "question"
    BACKCHANNEL = "backchannel"


class Message(models.Model):
    """One message of a session; ``created_at`` is the conversation's own time."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="messages")
    # Indexed by (session, id) and (session, created_at) below, which serve lookups by session too.
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages", db_index=False)
    # The client's own id for the message (optional): a message re-sent with the same id
    # is not stored twice, so clients can retry and importers can run again.
    external_id = id_field(max_length=255, blank=True)
    role = models.CharField(
        max_length=16,
        choices=Role.choices,
        error_messages={
            "invalid_choice": f"must be one of {', '.join(Role.values)}, not %(value)r.",
            "blank": f"must be one of {', '.join(Role.values)}, not ''.",
        },
    )
    content = content_field("MAX_MESSAGE_CHARS")
    channel = id_field(max_length=64, blank=True)
    metadata = models.JSONField(default=dict, blank=True, validators=[validate_storable_json])
    created_at = models.DateTimeField(default=timezone.now, db_index=True, validators=[validate_aware_moment])
    received_at = models.DateTimeField(auto_now_add=True)
    embedding = embedding_field()
    embedding_model = embedding_model_field()
    # Set with the vector: a backchannel is never a memory, a question only the lead-in to its answer.
    dialogue_act = models.CharField(
        max_length=16, choices=DialogueAct.choices, default=DialogueAct.STATEMENT, db_default=DialogueAct.STATEMENT
    )
    # Set with the vector, for a user's turn: the one-value slot ("job", "sister priya:residence") it speaks
    # of, read even where no fact could be raised, so an older fact of that slot is no longer shown as known.
    slot = models.CharField(max_length=100, blank=True, default="", db_default="")
    # Read for facts and entities (by the worker, with its vector; or it came with them, from an export).
    read = models.BooleanField(default=False, db_default=False)
    # Full-text index of what is said, by whom, and any shared photo's caption (English stemming).
    search_vector = models.GeneratedField(
        expression=SearchVector(
            "content",
            KeyTextTransform("speaker", "metadata"),
            KeyTextTransform("image_caption", "metadata"),
            config="english",
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "external_id"],
                condition=~models.Q(external_id=""),
                name="message_external_id_unique_per_session",
            )
        ]
        indexes = [
            models.Index(fields=["session", "created_at"]),
            # Whether a session has messages past its summary's watermark (the backlog, the sweep,
            # the rolling summary): one index probe per session.
            models.Index(fields=["session", "id"], name="message_session_id_idx"),
            models.Index(fields=["user", "created_at"]),
            hnsw_index("message_embedding_hnsw"),
            GinIndex(fields=["search_vector"], name="message_search_vector_gin"),
            # Messages waiting for their vector (a handful): the embedding task tops its
            # model batches up from here without scanning the table.
            models.Index(fields=["id"], condition=models.Q(embedding__isnull=True), name="message_unembedded"),
            # A user's turns that speak of a slot, newest first: what may have changed a fact.
            models.Index(fields=["user", "slot", "created_at"], condition=~models.Q(slot=""), name="message_slot"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def speaker(self) -> str:
        """The speaker's name when the client sent one in metadata, else the role."""
        return str((self.metadata or {}).get("speaker") or self.role)

    @property
    def text(self) -> str:
        """What is shown to a bot and to a chat model: speaker, text and any photo caption."""
        return f"{self.speaker}: {self._content_and_caption}"

    @property
    def embedding_text(self) -> str:
        """What is embedded: ``text``, without the speaker when it is only the role (``"user: "`` would
        make every turn of a user alike to the model, and unlike the user's own questions)."""
        return self.text if self.named_speaker else self._content_and_caption

    @property
    def named_speaker(self) -> bool:
        """Whether the client named the speaker (``metadata["speaker"]`` other than the role)."""
        return self.speaker.lower() != self.role

    @property
    def _content_and_caption(self) -> str:
        caption = (self.metadata or {}).get("image_caption")
        return f"{self.content} [shared a photo: {caption}]" if caption else self.content

    @property
    def dated_text(self) -> str:
        """``text`` after when it was said, for a chat model to resolve relative dates:
        ``"[2024-05-01 09:00 UTC] Mia: I moved here last week."``."""
        return f"[{self.created_at:%Y-%m-%d %H:%M} UTC] {self.text}"
