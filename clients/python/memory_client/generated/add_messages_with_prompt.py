from typing import Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Problems,
    ProblemsMessages,  # noqa: F401
    Prompt,
)


class AddMessagesWithPrompt(BaseModel):
    add_messages: Union[
        "AddMessagesWithPromptAddMessagesAddMessagesResult",
        "AddMessagesWithPromptAddMessagesOperationInfo",
    ] = Field(alias="addMessages", discriminator="typename__")


class AddMessagesWithPromptAddMessagesAddMessagesResult(BaseModel):
    typename__: Literal["AddMessagesResult"] = Field(alias="__typename")
    context: Optional["AddMessagesWithPromptAddMessagesAddMessagesResultContext"]


AddMessagesWithPromptAddMessagesAddMessagesResultContext = Prompt


class AddMessagesWithPromptAddMessagesOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


AddMessagesWithPrompt.model_rebuild()
AddMessagesWithPromptAddMessagesAddMessagesResult.model_rebuild()
