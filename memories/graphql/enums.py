"""GraphQL enums shared by inputs and types."""

from __future__ import annotations

from enum import Enum

import strawberry

from memories.kinds import MemoryKind

__all__ = ["HitKind", "Order"]

HitKind = strawberry.enum(MemoryKind, name="HitKind")


@strawberry.enum(description="Order of a list by time.")
class Order(Enum):
    OLDEST_FIRST = "oldest_first"
    NEWEST_FIRST = "newest_first"
