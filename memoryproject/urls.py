"""URLs: GraphQL (with GraphiQL) at /graphql/, the admin at /admin/."""

from django.contrib import admin
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from strawberry.django.views import GraphQLView

from memories.graphql.schema import schema

urlpatterns = [
    path("admin/", admin.site.urls),
    path("graphql/", csrf_exempt(GraphQLView.as_view(schema=schema, graphql_ide="graphiql"))),
]
