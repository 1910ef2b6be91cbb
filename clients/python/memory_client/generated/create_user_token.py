from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (
    Problems,
    ProblemsMessages,  # noqa: F401
    UserToken,
)


class CreateUserToken(BaseModel):
    create_user_token: Union[
        "CreateUserTokenCreateUserTokenUserToken",
        "CreateUserTokenCreateUserTokenOperationInfo",
    ] = Field(alias="createUserToken", discriminator="typename__")


class CreateUserTokenCreateUserTokenUserToken(UserToken):
    typename__: Literal["UserToken"] = Field(alias="__typename")


class CreateUserTokenCreateUserTokenOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


CreateUserToken.model_rebuild()
