from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Fact,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class RejectFact(BaseModel):
    reject_knowledge: Union[
        "RejectFactRejectKnowledgeKnowledge", "RejectFactRejectKnowledgeOperationInfo"
    ] = Field(alias="rejectKnowledge", discriminator="typename__")


class RejectFactRejectKnowledgeKnowledge(Fact):
    typename__: Literal["Knowledge"] = Field(alias="__typename")


class RejectFactRejectKnowledgeOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


RejectFact.model_rebuild()
