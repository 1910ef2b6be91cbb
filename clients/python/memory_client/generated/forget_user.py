from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    ForgetUserResult,
    Problems,
    ProblemsMessages,  # noqa: F401
)


class ForgetUser(BaseModel):
    forget_user: Union[
        "ForgetUserForgetUserForgetUserResult", "ForgetUserForgetUserOperationInfo"
    ] = Field(alias="forgetUser", discriminator="typename__")


class ForgetUserForgetUserForgetUserResult(ForgetUserResult):
    typename__: Literal["ForgetUserResult"] = Field(alias="__typename")


class ForgetUserForgetUserOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


ForgetUser.model_rebuild()
