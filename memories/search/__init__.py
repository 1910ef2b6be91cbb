"""Search and context: what a chatbot gets back from its users' memory.

``search`` answers a question; ``context`` prepares a chatbot's next turn. Both go the same way:

1. RowScope: the end users, sources (messages, summaries, knowledge, diaries), channel and time
   window a caller may read (``scope``).
2. Embed the query once, in a second thread, while the database runs the rankings that need no
   vector.
3. Rank (``retrievers``; steps 3-6 are ``retrieval.retrieve``): messages by BM25; when the query
   names an entity of the users (``memories.services.entities``), its facts and turns, most
   recent first; then, with the vector, every kind in one ranking (the similarities of one
   embedding model compare across kinds); when the query names a day or month (``dates``), the
   turns said then, by vector.
4. Fuse the rankings into one (``fusion``): reciprocal rank fusion, then each turn gains a share
   of the score of the turn before it and of its session's best; the last of the ``top_k`` places
   goes to the best relevant candidate (by vector) from a session the others do not show.
5. Load the best ``top_k`` as hits, each message with the turns around it (``hits``).
6. Gate: a hit whose cosine similarity to the query is under ``SEARCH_MIN_SIMILARITY`` is not
   relevant; with none relevant, the answer is "not found" and the context holds no memories.
7. ``search`` answers (``answer``); ``context`` (its own module) adds the session's recent window
   and one prompt block (``prompt``).

Only vectors made by the configured embedding model take part in a ranking.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings

from memories.llm import Usage, get_chat_model
from memories.metrics import SEARCH_STAGE_SECONDS
from memories.search.answer import NOT_FOUND, Answer, answer_question
from memories.search.context import Context, context
from memories.search.excerpts import fit_to_budget
from memories.search.hits import Hit, Turn
from memories.search.prompt import TOKENIZER
from memories.search.retrieval import embed_query, relevant, retrieve
from memories.search.retrievers import ReembeddingNeeded
from memories.search.scope import SOURCES, RowScope, SearchFilter
from memories.search.validation import MAX_QUERY_CHARS, validate_search

__all__ = [
    "MAX_QUERY_CHARS",
    "NOT_FOUND",
    "SOURCES",
    "TOKENIZER",
    "Answer",
    "Context",
    "Hit",
    "ReembeddingNeeded",
    "SearchFilter",
    "SearchResult",
    "Turn",
    "context",
    "retrieve",
    "search",
]


@dataclass(frozen=True)
class SearchResult:
    """What ``search`` returns: hits best first, the answer (``None`` when not asked for) and usage."""

    hits: list[Hit]
    answer: Answer | None
    usage: Usage = field(default_factory=Usage)
    multi_user: bool = False

    @property
    def retrieved_data(self) -> str:
        """The hits as labelled, timestamped blocks, as an answer model reads them."""
        return "\n\n".join(h.block(multi_user=self.multi_user) for h in self.hits)


def search(
    *,
    user_external_ids: list[str],
    query: str,
    top_k: int | None = None,
    sources: tuple[str, ...] = SOURCES,
    include_shared: bool = False,
    search_filter: SearchFilter | None = None,
    answer: bool = True,
) -> SearchResult:
    """Search the memory of the given end users for ``query`` and answer it.

    Args:
        user_external_ids: the end users whose memory is searched (one or more).
        query: the question, e.g. ``"What is my favourite food?"``.
        top_k: hits returned (default ``SEARCH_DEFAULT_TOP_K``, at most ``SEARCH_MAX_TOP_K``); together
            at most ``SEARCH_MAX_TOKENS`` tokens, long turns shown by their parts that match the query.
        sources: kinds ranked: any of ``message``, ``summary``, ``knowledge``, ``diary``.
        include_shared: also search system-wide knowledge (no owner).
        search_filter: only this channel and window of conversation time.
        answer: ``False`` retrieves only; no answer is made.

    Raises:
        ValidationError: empty query or user list, a query over ``MAX_QUERY_CHARS``, a NUL
            character, ``top_k`` out of range or an unknown source (names the field).
        ReembeddingNeeded: stored vectors were made by another embedding model.
        ModelBackendError: the embedding or chat backend failed.
    """
    top_k = settings.SEARCH_DEFAULT_TOP_K if top_k is None else top_k
    validate_search(user_external_ids=user_external_ids, query=query, top_k=top_k, sources=sources)
    with ThreadPoolExecutor(max_workers=1) as model:
        # The model embeds the query while the database runs what needs no vector.
        future = model.submit(embed_query, query)
        scope = RowScope.for_users(
            user_external_ids=user_external_ids,
            search_filter=search_filter or SearchFilter(),
            sources=tuple(sources),
            include_shared=include_shared,
        )
        with SEARCH_STAGE_SECONDS.labels("retrieve").time():
            hits = retrieve(scope=scope, query=query, vector=lambda: future.result().vectors[0], top_k=top_k)
            hits = fit_to_budget(hits, query=query, max_tokens=settings.SEARCH_MAX_TOKENS)
        embedding = future.result()
    reply = None
    if answer:
        with SEARCH_STAGE_SECONDS.labels("answer").time():
            reply = answer_question(
                question=query,
                hits=hits,
                relevant=relevant(hits),
                chat=get_chat_model(),
                multi_user=scope.multi_user,
                zone=scope.search_filter.zone,
            )
    usage = embedding.usage + (reply.usage if reply else Usage())
    return SearchResult(hits=hits, answer=reply, usage=usage, multi_user=scope.multi_user)
