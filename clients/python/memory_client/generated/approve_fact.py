from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Fact,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class ApproveFact(BaseModel):
    approve_knowledge: Union[
        "ApproveFactApproveKnowledgeKnowledge",
        "ApproveFactApproveKnowledgeOperationInfo",
    ] = Field(alias="approveKnowledge", discriminator="typename__")


class ApproveFactApproveKnowledgeKnowledge(Fact):
    typename__: Literal["Knowledge"] = Field(alias="__typename")


class ApproveFactApproveKnowledgeOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


ApproveFact.model_rebuild()
