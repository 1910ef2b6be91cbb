"""The admin's playground: staff pick an end user, type a message, and see the ``context`` the
service would hand a bot for it (``memories.search.context``); optionally the message is stored as
the user's turn (``memories.services.messages.messages_add``). Registered by ``memories.admin``."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from memories import search
from memories.llm import ModelBackendError
from memories.models import EndUser, Role
from memories.search import ReembeddingNeeded
from memories.services.messages import MessageIn, messages_add

__all__ = ["PLAYGROUND_SESSION", "PlaygroundForm", "playground_view"]

# The session used when the end user has none yet and the form names none.
PLAYGROUND_SESSION = "playground"


class PlaygroundForm(forms.Form):
    """An end user, an optional session (default: the user's latest), a message, and whether to store it."""

    user = forms.ModelChoiceField(
        queryset=EndUser.objects.order_by("external_id"), to_field_name="external_id", label="End user"
    )
    session = forms.CharField(
        required=False,
        max_length=255,
        help_text=f"A session id; empty: the user's latest session ({PLAYGROUND_SESSION!r} if they have none).",
    )
    message = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), help_text="What the user says.")
    store = forms.BooleanField(
        required=False, label="Store this turn", help_text="Add the message to the user's history, as a bot would."
    )


def _session_of(user: EndUser, session: str) -> str:
    """The session named, else the user's latest, else ``PLAYGROUND_SESSION``."""
    if session:
        return session
    latest = user.sessions.order_by("-last_message_at", "-id").values_list("external_id", flat=True).first()
    return latest or PLAYGROUND_SESSION


def playground_view(request: HttpRequest, *, admin_site: admin.AdminSite) -> HttpResponse:
    """GET: the form. POST: the form, and the context for the message (``search.Context``: window,
    memories with kind, score, relevance, session and time, the prompt block and its token counts),
    computed before the message is stored, as a bot would ask for it. Errors from the search
    (``ValidationError``, ``ReembeddingNeeded``, ``ModelBackendError``) are shown on the form.
    """
    form = PlaygroundForm(request.POST or None)
    result, stored, session = None, None, ""
    if request.method == "POST" and form.is_valid():
        user: EndUser = form.cleaned_data["user"]
        session = _session_of(user, form.cleaned_data["session"].strip())
        message = form.cleaned_data["message"]
        try:
            result = search.context(user_external_id=user.external_id, session_external_id=session, query=message)
            if form.cleaned_data["store"]:
                added = messages_add(
                    user_external_id=user.external_id,
                    session_external_id=session,
                    messages=[MessageIn(role=Role.USER, content=message)],
                )
                stored = added.messages[0] if added.messages else None
        except ValidationError as exc:
            form.add_error(None, exc.messages)
            result = None
        except (ReembeddingNeeded, ModelBackendError) as exc:
            form.add_error(None, str(exc))
            result = None
    context = {
        **admin_site.each_context(request),
        "title": "Playground",
        "form": form,
        "result": result,
        "session": session,
        "stored": stored,
    }
    return TemplateResponse(request, "admin/memories/playground.html", context)
