"""Context: what a chatbot needs for its next turn in one session (step 7 of ``memories.search``):
the session's recent window, the relevant memories that fit the token budget with no turn shown
twice, facts first, and the prompt block."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from django.conf import settings

from memories.kinds import MemoryKind
from memories.llm import Usage
from memories.metrics import SEARCH_STAGE_SECONDS
from memories.models import EndUser, Message, Role, Session
from memories.search.excerpts import fit_to_budget
from memories.search.hits import Hit, Turn, bounded
from memories.search.order import in_prompt_order
from memories.search.prompt import TOKENIZER, count_tokens, render_prompt
from memories.search.retrieval import embed_query, relevant, retrieve
from memories.search.scope import RowScope
from memories.search.validation import validate_context

_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")


@dataclass(frozen=True)
class Context:
    """What a chatbot needs for its next turn in one session.

    ``window``: the session's last turns, oldest first. ``memories``: relevant hits from the
    user's memory, none of them in the window nor the query message. ``tokens``: counts by
    ``TOKENIZER`` of the window's turns, the memories' blocks and the whole ``prompt``.
    """

    query: str | None
    window: list[Turn]
    memories: list[Hit]
    prompt: str
    tokens: dict[str, int]
    tokenizer: str = TOKENIZER
    usage: Usage = field(default_factory=Usage)


def context(
    *,
    user_external_id: str,
    session_external_id: str,
    query: str | None = None,
    window_turns: int | None = None,
    max_tokens: int | None = None,
    include_other_sessions: bool = True,
    include_shared: bool = False,
    query_message_id: int | None = None,
    exclude_message_ids: Collection[int] = (),
) -> Context:
    """The context for a chatbot's next turn in a session: recent window, relevant memories, prompt.

    Args:
        query: what to find memories for; default: the session's latest user message (which
            is then left out of the memories, as the window's turns are). A message of the
            session saying exactly ``query`` is left out too, and so is a summary of the session
            whose turns are all in the window.
        window_turns: the session's last turns returned (default ``CONTEXT_WINDOW_TURNS``; 0: none).
        max_tokens: the memories' blocks are cut to fit this many tokens (default
            ``CONTEXT_MAX_TOKENS``), best first.
        include_other_sessions: memories from the user's other sessions (default); ``False``:
            only from this session, older than the window.
        include_shared: also system-wide knowledge (for an end user with no rows yet too).
        query_message_id: without ``query``, the session's message to use as the query instead of
            its latest user message (``addMessages``: the newest user message it stored).
        exclude_message_ids: messages never shown in the memories (``addMessages``: those it stored).

    Raises:
        ValidationError: a bad id, query, window size or token budget (names the field).
        ReembeddingNeeded, ModelBackendError: as ``search``.
    """
    window_turns = settings.CONTEXT_WINDOW_TURNS if window_turns is None else window_turns
    max_tokens = settings.CONTEXT_MAX_TOKENS if max_tokens is None else max_tokens
    validate_context(
        user_external_id=user_external_id,
        session_external_id=session_external_id,
        query=query,
        window_turns=window_turns,
        max_tokens=max_tokens,
    )
    memories: list[Hit] = []
    memory_tokens = 0
    usage = Usage()
    with ThreadPoolExecutor(max_workers=1) as model:
        # Joined through the session, whose (user, external id) index finds the window in one statement.
        said = Message.objects.filter(
            session__user__external_id=user_external_id, session__external_id=session_external_id
        )
        recent = bounded(
            list(said.only("session", "user", *Turn.COLUMNS).order_by("-created_at", "-id")[:window_turns])
        )
        user_pk, session_pk = _owner(recent, user_external_id=user_external_id, session_external_id=session_external_id)
        # An end user with no rows yet has no memory of their own, but shared knowledge applies to them.
        wanted = (user_pk is not None or include_shared) and max_tokens > 0
        turns = Message.objects.filter(session_id=session_pk).only("session", *Turn.COLUMNS)
        window = [Turn.of(m) for m in reversed(recent)]
        excluded = {m.pk for m in recent} | set(exclude_message_ids)
        given = query
        if query is None and session_pk is not None:
            asked = turns.filter(pk=query_message_id) if query_message_id is not None else turns.filter(role=Role.USER)
            latest = asked.order_by("-created_at", "-id").first()
            if latest is not None:
                query = latest.content[: settings.MAX_MESSAGE_CHARS]
                excluded.add(latest.pk)
        if wanted and query and query.strip():
            # The model embeds the query while the database ranks by words and entities.
            future = model.submit(embed_query, query)
            scope = RowScope(
                user_pks=(user_pk,) if user_pk is not None else (),
                include_shared=include_shared,
                exclude_message_pks=tuple(sorted(excluded)),
                session_pk=None if include_other_sessions else (session_pk or -1),
            )
            with SEARCH_STAGE_SECONDS.labels("retrieve").time():
                hits = retrieve(
                    scope=scope,
                    query=query,
                    vector=lambda: future.result().vectors[0],
                    top_k=settings.SEARCH_DEFAULT_TOP_K,
                    hidden=excluded,
                    # What the user said next often completes a memory ("Did you find a date?" "December 20.").
                    turns_after=2,
                )
            usage = future.result().usage
            hits = [
                h
                for h in hits
                if not _in_view(h, session_id=session_external_id, window=window, query=given, excluded=excluded)
            ]
            shown = fit_to_budget(relevant(hits), query=query, max_tokens=max_tokens)
            memories, memory_tokens = _within_budget(shown, max_tokens)
            memories = in_prompt_order(memories)
    prompt = render_prompt(session_id=session_external_id, window=window, memories=memories)
    *turn_tokens, prompt_tokens = count_tokens([*(t.text for t in window), prompt])
    window_tokens = sum(turn_tokens)
    return Context(
        query=query,
        window=window,
        memories=memories,
        prompt=prompt,
        tokens={"window": window_tokens, "memories": memory_tokens, "prompt": prompt_tokens},
        usage=usage,
    )


def _owner(recent: list[Message], *, user_external_id: str, session_external_id: str) -> tuple[int | None, int | None]:
    """The pks of the end user and the session (``None`` when not stored yet): from the window's
    messages when it has any, else looked up."""
    if recent:
        return recent[0].user_id, recent[0].session_id
    session = Session.objects.filter(user__external_id=user_external_id, external_id=session_external_id)
    if ids := session.values_list("user_id", "pk").first():
        return ids
    return EndUser.objects.filter(external_id=user_external_id).values_list("pk", flat=True).first(), None


def _in_view(hit: Hit, *, session_id: str, window: Sequence[Turn], query: str | None, excluded: set[int]) -> bool:
    """Whether ``hit`` repeats what a chatbot already has in session ``session_id``: a message of it
    saying the ``query`` given (the query itself), a summary of it whose turns all are in ``window``, or a
    fact raised only from turns it has (``excluded``: the window's and the query's)."""
    if hit.session_external_id != session_id:
        return False
    if hit.kind == MemoryKind.KNOWLEDGE:
        return bool(hit.turns) and all(t.id in excluded for t in hit.turns)
    if hit.kind == MemoryKind.MESSAGE:
        return hit.content == query
    return hit.kind == MemoryKind.SUMMARY and bool(window) and hit.conversation_time >= window[0].created_at


def _within_budget(hits: list[Hit], max_tokens: int) -> tuple[list[Hit], int]:
    """The best ``hits`` whose blocks fit ``max_tokens`` together, and their blocks' tokens.

    No turn is shown twice: a message hit loses the turns an earlier kept hit shows, and is left
    out if its own turn is one; a summary loses its sentences that a kept turn says, and is left
    out when none is left.
    """
    kept: list[Hit] = []
    shown: dict[int, str] = {}
    used = 0
    for hit, tokens in zip(hits, count_tokens([h.block() for h in hits]), strict=True):
        if hit.kind == MemoryKind.MESSAGE:
            if hit.id in shown:
                continue
            turns = tuple(t for t in hit.turns if t.id not in shown)
            if len(turns) < len(hit.turns):
                hit = replace(hit, turns=turns)
                tokens = sum(count_tokens([hit.block()]))
        elif hit.kind == MemoryKind.SUMMARY and shown:
            content = _unsaid(hit.content, said=shown.values())
            if not content:
                continue
            if content != hit.content:
                hit = replace(hit, content=content)
                tokens = sum(count_tokens([hit.block()]))
        if used + tokens > max_tokens:
            continue
        kept.append(hit)
        used += tokens
        shown.update((t.id, t.content) for t in hit.turns)
    return kept, used


def _unsaid(summary: str, *, said: Iterable[str]) -> str:
    """The sentences of ``summary`` (each maybe led by its speaker, ``"Mia: ..."``) that none of the
    ``said`` turns holds word for word."""
    said = [" ".join(text.split()) for text in said]
    kept = []
    for sentence in _SENTENCE_END.split(summary.strip()):
        words = " ".join(sentence.split(": ", 1)[-1].split())
        if words and not any(words in text for text in said):
            kept.append(sentence)
    return " ".join(kept)
