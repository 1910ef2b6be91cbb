from typing import Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Context,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class AddMessagesWithContext(BaseModel):
    add_messages: Union[
        "AddMessagesWithContextAddMessagesAddMessagesResult",
        "AddMessagesWithContextAddMessagesOperationInfo",
    ] = Field(alias="addMessages", discriminator="typename__")


class AddMessagesWithContextAddMessagesAddMessagesResult(BaseModel):
    typename__: Literal["AddMessagesResult"] = Field(alias="__typename")
    context: Optional["AddMessagesWithContextAddMessagesAddMessagesResultContext"]


AddMessagesWithContextAddMessagesAddMessagesResultContext = Context


class AddMessagesWithContextAddMessagesOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


AddMessagesWithContext.model_rebuild()
AddMessagesWithContextAddMessagesAddMessagesResult.model_rebuild()
