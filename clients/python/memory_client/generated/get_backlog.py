from .base_model import BaseModel
from .fragments import Backlog


class GetBacklog(BaseModel):
    backlog: "GetBacklogBacklog"


GetBacklogBacklog = Backlog
GetBacklog.model_rebuild()
