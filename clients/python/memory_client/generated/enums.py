from enum import Enum


class HitKind(str, Enum):
    MESSAGE = "MESSAGE"
    SUMMARY = "SUMMARY"
    KNOWLEDGE = "KNOWLEDGE"
    DIARY = "DIARY"


class KnowledgeStatus(str, Enum):
    CANDIDATE = "CANDIDATE"
    ACTIVE = "ACTIVE"
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"


class OperationMessageKind(str, Enum):
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    PERMISSION = "PERMISSION"
    VALIDATION = "VALIDATION"
