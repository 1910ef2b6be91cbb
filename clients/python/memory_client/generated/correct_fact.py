from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Fact,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class CorrectFact(BaseModel):
    update_knowledge: Union[
        "CorrectFactUpdateKnowledgeKnowledge", "CorrectFactUpdateKnowledgeOperationInfo"
    ] = Field(alias="updateKnowledge", discriminator="typename__")


class CorrectFactUpdateKnowledgeKnowledge(Fact):
    typename__: Literal["Knowledge"] = Field(alias="__typename")


class CorrectFactUpdateKnowledgeOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


CorrectFact.model_rebuild()
