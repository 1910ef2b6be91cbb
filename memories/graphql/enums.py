"""GraphQL enums shared by inputs and types."""

from __future__ import annotations

from enum import Enum

import strawberry

__all__ = ["HitKind", "Order"]


@strawberry.enum
class HitKind(Enum):
    MESSAGE = "message"
    SUMMARY = "summary"
    KNOWLEDGE = "knowledge"
    DIARY = "diary"


@strawberry.enum(description="Order of a list by time.")
class Order(Enum):
    OLDEST_FIRST = "oldest_first"
    NEWEST_FIRST = "newest_first"
