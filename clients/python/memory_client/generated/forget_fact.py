from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Problems,
    ProblemsMessages,  # noqa: F401
)


class ForgetFact(BaseModel):
    delete_knowledge: Union[
        "ForgetFactDeleteKnowledgeDeleteKnowledgeResult",
        "ForgetFactDeleteKnowledgeOperationInfo",
    ] = Field(alias="deleteKnowledge", discriminator="typename__")


class ForgetFactDeleteKnowledgeDeleteKnowledgeResult(BaseModel):
    typename__: Literal["DeleteKnowledgeResult"] = Field(alias="__typename")
    deleted_id: str = Field(alias="deletedId")


class ForgetFactDeleteKnowledgeOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


ForgetFact.model_rebuild()
