from typing import Any

from pydantic import Field

from .base_model import BaseModel


class ExportUser(BaseModel):
    export_user: Any = Field(alias="exportUser")
