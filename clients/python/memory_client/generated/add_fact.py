from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Fact,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class AddFact(BaseModel):
    add_knowledge: Union[
        "AddFactAddKnowledgeKnowledge", "AddFactAddKnowledgeOperationInfo"
    ] = Field(alias="addKnowledge", discriminator="typename__")


class AddFactAddKnowledgeKnowledge(Fact):
    typename__: Literal["Knowledge"] = Field(alias="__typename")


class AddFactAddKnowledgeOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


AddFact.model_rebuild()
