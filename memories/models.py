"""Models of the memory service: end users, sessions, messages, summaries, knowledge, diaries.

Every vector column has the dimension of ``settings.EMBEDDING_DIMENSIONS``, an HNSW index
with cosine operators (pgvector's ``vector_cosine_ops``, paired with ``CosineDistance`` in
queries), and records in ``embedding_model`` which model produced it.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField
from simple_history.models import HistoricalRecords

from memories.validators import content_field, id_field, validate_aware_moment, validate_storable_json

__all__ = [
    "ApiKey",
    "Diary",
    "EndUser",
    "Entity",
    "DialogueAct",
    "EntityKind",
    "FactToReview",
    "Knowledge",
    "KnowledgeStatus",
    "Message",
    "Role",
    "Session",
    "Summary",
    "SummaryMode",
]


def _embedding_field() -> VectorField:
    return VectorField(dimensions=settings.EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False)


def _embedding_model_field() -> models.CharField:
    return models.CharField(max_length=200, blank=True, default="", editable=False)


def _hnsw_index(name: str) -> HnswIndex:
    # m=16, ef_construction=64 are pgvector's defaults (pgvector README, "HNSW").
    return HnswIndex(name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"])


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

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "external_id"], name="session_unique_per_user")]
        ordering = ["user", "first_message_at"]
        indexes = [models.Index(fields=["user", "last_message_at"])]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.external_id}"


class Role(models.TextChoices):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


class DialogueAct(models.TextChoices):
    """What a turn does (``memories.llm.acts``): states something, asks, or only acknowledges."""

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
    embedding = _embedding_field()
    embedding_model = _embedding_model_field()
    # Set with the vector: a backchannel is never a memory, a question only the lead-in to its answer.
    dialogue_act = models.CharField(
        max_length=16, choices=DialogueAct.choices, default=DialogueAct.STATEMENT, db_default=DialogueAct.STATEMENT
    )
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
            _hnsw_index("message_embedding_hnsw"),
            GinIndex(fields=["search_vector"], name="message_search_vector_gin"),
            # Messages waiting for their vector (a handful): the embedding task tops its
            # model batches up from here without scanning the table.
            models.Index(fields=["id"], condition=models.Q(embedding__isnull=True), name="message_unembedded"),
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
    embedding = _embedding_field()
    embedding_model = _embedding_model_field()

    class Meta:
        ordering = ["covers_from"]
        verbose_name_plural = "summaries"
        indexes = [models.Index(fields=["user", "covers_from"]), _hnsw_index("summary_embedding_hnsw")]

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
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    embedding = _embedding_field()
    embedding_model = _embedding_model_field()
    # Audit trail: who changed what and when, with the previous text (django-simple-history).
    history = HistoricalRecords(excluded_fields=["embedding", "embedding_model"])

    class Meta:
        ordering = ["-updated_at"]
        verbose_name_plural = "knowledge"
        indexes = [models.Index(fields=["user", "status"]), _hnsw_index("knowledge_embedding_hnsw")]

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


class EntityKind(models.TextChoices):
    PERSON = "person"
    PET = "pet"
    PLACE = "place"
    ORGANISATION = "organisation"
    OTHER = "other"


class Entity(models.Model):
    """Someone or something an end user talks about: a person, pet, place or organisation.

    Raised with the facts (``memories.services.entities``); ``knowledge`` and ``messages`` are the
    facts and turns that mention it. ``aliases`` are other names it goes by (a JSON list of strings);
    names are unique per user, case aside.
    """

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=EntityKind.choices, default=EntityKind.OTHER)
    aliases = models.JSONField(default=list, blank=True)
    first_mentioned_at = models.DateTimeField()
    last_mentioned_at = models.DateTimeField()
    knowledge = models.ManyToManyField(Knowledge, blank=True, related_name="entities")
    messages = models.ManyToManyField(Message, blank=True, related_name="entities")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-last_mentioned_at", "id"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint("user", models.functions.Lower("name"), name="entity_unique_name_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"

    def clean(self) -> None:
        """Refuse a name (case aside) another entity of the user has, whatever fields a form edits.

        Raises:
            ValidationError: naming ``name``.
        """
        others = Entity.objects.filter(user_id=self.user_id, name__iexact=self.name).exclude(pk=self.pk)
        if self.user_id is not None and others.exists():
            raise ValidationError({"name": [f"This user already has an entity named {self.name!r}."]})


class Diary(models.Model):
    """One diary entry per end user per date."""

    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="diaries")
    diary_date = models.DateField()
    content = content_field("MAX_DIARY_CHARS")
    metadata = models.JSONField(default=dict, blank=True, validators=[validate_storable_json])
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    embedding = _embedding_field()
    embedding_model = _embedding_model_field()

    class Meta:
        ordering = ["-diary_date"]
        verbose_name_plural = "diaries"
        constraints = [models.UniqueConstraint(fields=["user", "diary_date"], name="diary_unique_per_user_date")]
        indexes = [_hnsw_index("diary_embedding_hnsw")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.diary_date}"

    @property
    def embedding_text(self) -> str:
        """What is embedded: the date and the entry."""
        return f"Diary {self.diary_date.isoformat()}: {self.content}"


class ApiKey(models.Model):
    """A key for the GraphQL API, scoped to some end users or, for a trusted backend, to all.

    Only a SHA-256 hash of the key is stored (the key is 256 random bits, so a fast hash is
    enough; the same choice as GitHub's tokens); ``prefix`` identifies it in lists and logs.
    """

    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    all_users = models.BooleanField(default=False, help_text="Trusted backend: may act on every end user.")
    may_curate = models.BooleanField(
        default=False, help_text="May approve, reject and edit fact candidates through the API."
    )
    # External ids, not foreign keys: a key keeps its scope when a user is forgotten and comes back.
    user_external_ids = ArrayField(
        models.CharField(max_length=255), default=list, blank=True, help_text="End user ids, comma-separated."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        """False once revoked."""
        return self.revoked_at is None
