"""URLs: GraphQL (with GraphiQL) at /graphql/, the admin at /admin/, health checks and metrics; errors as JSON."""

from django.contrib import admin
from django.urls import path

from memories.graphql.schema import schema
from memories.graphql.views import MemoryGraphQLView
from memories.health import healthz, readyz
from memories.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("graphql/", MemoryGraphQLView.as_view(schema=schema, graphql_ide="graphiql")),
    path("healthz", healthz),
    path("readyz", readyz),
    path("metrics", metrics_view),
]

# An uncaught error answers JSON with a code (HTTP 500 INTERNAL_ERROR), never an HTML page; so does a
# request refused before any view (HTTP 400 BAD_REQUEST: a Host not in ALLOWED_HOSTS).
handler500 = "memories.http.server_error"
handler400 = "memories.http.bad_request"
