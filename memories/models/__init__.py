"""Models of the memory service: end users, sessions, messages, summaries, knowledge, diaries,
entities and API keys, one module per group; every model is imported from here.

Every vector column has the dimension of ``settings.EMBEDDING_DIMENSIONS``, an HNSW index
with cosine operators (pgvector's ``vector_cosine_ops``, paired with ``CosineDistance`` in
queries), and records in ``embedding_model`` which model produced it (``memories.models.vectors``).
"""

from memories.models.api_keys import ApiKey
from memories.models.conversations import DialogueAct, EndUser, Message, Role, Session
from memories.models.derived import Diary, FactToReview, Knowledge, KnowledgeStatus, Summary, SummaryMode
from memories.models.entities import Entity, EntityKind

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
