from typing import Literal, Union

from pydantic import Field

from .base_model import BaseModel
from .fragments import (  # noqa: F401
    Problems,
    ProblemsMessages,
    SearchResult,
    SearchResultHits,
)


class Search(BaseModel):
    search: Union["SearchSearchSearchResult", "SearchSearchOperationInfo"] = Field(
        discriminator="typename__"
    )


class SearchSearchSearchResult(SearchResult):
    typename__: Literal["SearchResult"] = Field(alias="__typename")


class SearchSearchOperationInfo(Problems):
    typename__: Literal["OperationInfo"] = Field(alias="__typename")


Search.model_rebuild()
