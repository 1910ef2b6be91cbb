from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (  # noqa: F401
    AddMessagesResult,
    AddMessagesResultMessages,
    Problems,
    ProblemsMessages,
)


class AddMessages(BaseModel):
    add_messages: Union[
        "AddMessagesAddMessagesAddMessagesResult", "AddMessagesAddMessagesOperationInfo"
    ] = Field(alias="addMessages", discriminator="typename__")


class AddMessagesAddMessagesAddMessagesResult(AddMessagesResult):
    typename__: Literal["AddMessagesResult"] = Field(alias="__typename")


class AddMessagesAddMessagesOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


AddMessages.model_rebuild()
