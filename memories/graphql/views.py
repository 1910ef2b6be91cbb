"""The GraphQL endpoint: authenticates the caller once and sets their ``Scope``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt, ensure_csrf_cookie
from strawberry.django.views import GraphQLView

from memories.graphql.permissions import Scope
from memories.services.api_keys import api_key_authenticate

__all__ = ["MemoryGraphQLView"]

_UNAUTHENTICATED = (
    "Authentication required: send `Authorization: Bearer <API key>` "
    "(create one with `manage.py create_api_key`), or log into the admin to use GraphiQL."
)


def _error(message: str, code: str, status: int) -> JsonResponse:
    return JsonResponse({"data": None, "errors": [{"message": message, "extensions": {"code": code}}]}, status=status)


@method_decorator([csrf_exempt, ensure_csrf_cookie], name="dispatch")
class MemoryGraphQLView(GraphQLView):
    """Strawberry's view behind authentication.

    - ``Authorization: Bearer <key>``: an active API key; its scope is the key's end users.
    - A staff member's admin session (GraphiQL in the browser): all users, CSRF checked.
    - Anything else gets HTTP 401 and no data. The GraphiQL page itself (a GET without a
      query) is served to everyone.
    """

    def dispatch(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method == "GET" and "query" not in request.GET:
            return super().dispatch(request, *args, **kwargs)
        header = request.headers.get("Authorization", "")
        if header:
            scheme, _, raw_key = header.partition(" ")
            key = api_key_authenticate(raw_key=raw_key.strip()) if scheme.lower() == "bearer" else None
            if key is None:
                return _error("Invalid or revoked API key.", "UNAUTHENTICATED", 401)
            request.memory_scope = Scope(
                all_users=key.all_users,
                user_external_ids=frozenset(key.user_external_ids),
            )
        elif request.user.is_authenticated and request.user.is_staff:
            if CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {}) is not None:
                return _error("CSRF check failed: reload GraphiQL.", "FORBIDDEN", 403)
            request.memory_scope = Scope(all_users=True)
        else:
            return _error(_UNAUTHENTICATED, "UNAUTHENTICATED", 401)
        return super().dispatch(request, *args, **kwargs)
