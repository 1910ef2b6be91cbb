from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Problems,
    ProblemsMessages,  # noqa: F401
)


class CreateSummaries(BaseModel):
    create_summaries: Union[
        "CreateSummariesCreateSummariesQueuedSummariesResult",
        "CreateSummariesCreateSummariesOperationInfo",
    ] = Field(alias="createSummaries", discriminator="typename__")


class CreateSummariesCreateSummariesQueuedSummariesResult(BaseModel):
    typename__: Literal["QueuedSummariesResult"] = Field(alias="__typename")
    queued_session_ids: list[str] = Field(alias="queuedSessionIds")


class CreateSummariesCreateSummariesOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


CreateSummaries.model_rebuild()
