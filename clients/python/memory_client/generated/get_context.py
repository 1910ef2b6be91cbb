from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (  # noqa: F401
    Context,
    ContextMemories,
    ContextWindow,
    Problems,
    ProblemsMessages,
    PromptTokens,
)


class GetContext(BaseModel):
    context: Union["GetContextContextContext", "GetContextContextOperationInfo"] = (
        Field(discriminator="typename__")
    )


class GetContextContextContext(Context):
    typename__: Literal["Context"] = Field(alias="__typename")


class GetContextContextOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


GetContext.model_rebuild()
