"""URLs: GraphQL (with GraphiQL) at /graphql/, the admin at /admin/."""

from django.contrib import admin
from django.urls import path

from memories.graphql.schema import schema
from memories.graphql.views import MemoryGraphQLView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("graphql/", MemoryGraphQLView.as_view(schema=schema, graphql_ide="graphiql")),
]
