from pydantic import Field

from .base_model import BaseModel
from .fragments import Fact


class Facts(BaseModel):
    knowledge: "FactsKnowledge"


class FactsKnowledge(BaseModel):
    total_count: int = Field(alias="totalCount")
    results: list["FactsKnowledgeResults"]


FactsKnowledgeResults = Fact
Facts.model_rebuild()
FactsKnowledge.model_rebuild()
